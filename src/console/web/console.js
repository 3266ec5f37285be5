/* global window, document, EventSource, CustomEvent, setTimeout */
// The console's only script (docs/console.md): times in the viewer's zone, and live updates. Pages
// are complete without it; it makes them follow the registry. htmx (beside this file) does the
// fetching and swapping of live sections; this file tells it when, from the registry's event stream.
'use strict';

(function () {
  const timeFormat = new Intl.DateTimeFormat(undefined, {
    year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit', timeZoneName: 'short',
  });

  /** Every <time data-local> under root shown in the viewer's time zone; UTC stays in the title. */
  function localiseTimes(root) {
    for (const element of root.querySelectorAll('time[data-local]')) {
      const at = new Date(element.getAttribute('datetime'));
      if (!Number.isNaN(at.getTime())) element.textContent = timeFormat.format(at);
    }
  }

  function follow() {
    const state = document.getElementById('live-state');
    const say = (text, kind) => {
      // Only a change is written: a status region announces every write.
      if (!state || (state.textContent === text && state.dataset.state === kind)) return;
      state.textContent = text;
      state.dataset.state = kind;
    };
    // The registry's event types, as the server wrote them into the page (one list, in the registry).
    const eventTypes = (document.body.dataset.eventTypes || '').split(' ').filter(Boolean);
    let lastId = null;
    let failures = 0;
    let source = null;

    function open() {
      const url = lastId ? '/live?cursor=' + encodeURIComponent(lastId) : '/live';
      source = new EventSource(url);
      source.addEventListener('ward-open', () => {
        // After a gap without a position to resume from, refresh once to catch up.
        if (failures > 0 && !lastId) document.body.dispatchEvent(new CustomEvent('ward:change'));
        failures = 0;
        say('Live', 'live');
      });
      for (const type of eventTypes) {
        source.addEventListener(type, (event) => {
          if (event.lastEventId) lastId = event.lastEventId;
          document.body.dataset.lastEvent = lastId || '';
          document.body.dispatchEvent(new CustomEvent('ward:change', { detail: { type } }));
        });
      }
      // The console could not serve the stream and says why (access/live-streams.ts).
      source.addEventListener('ward-end', (event) => {
        source.close();
        let status;
        try {
          status = JSON.parse(event.data).status;
        } catch {
          status = 0;
        }
        if (status === 401) {
          // The session ended: reloading lets the console send the page to its sign-in form.
          window.location.reload();
          return;
        }
        if (status === 403) {
          say('Live updates are not available to this key', 'off');
          return;
        }
        if (status === 410 || status === 422) {
          // The position is gone or unknown to the registry (pruned, or a reset): start afresh.
          lastId = null;
          document.body.dispatchEvent(new CustomEvent('ward:change'));
        }
        retryLater();
      });
      source.addEventListener('error', () => {
        // The browser reconnects by itself (sending Last-Event-ID) unless the answer was not a stream.
        if (source.readyState === EventSource.CONNECTING) {
          say('Reconnecting…', 'reconnecting');
          return;
        }
        source.close();
        retryLater();
      });
    }

    function retryLater() {
      failures += 1;
      const wait = Math.min(30000, 1000 * 2 ** Math.min(failures - 1, 5));
      say('Live updates paused; retrying', 'paused');
      setTimeout(open, wait);
    }
    open();
    window.addEventListener('pagehide', () => source && source.close());
  }

  /**
   * The try page's task: each state the gateway's stream brings (relayed by the console, /try/tasks/…/events)
   * is added to the list as text; at the end of each turn the status above is fetched again (htmx, the
   * `ward:task-final` trigger). The console ends the stream with `task-end` (every turn followed, an
   * answered task's included); it is then closed so it does not reconnect and replay.
   */
  function followTask(list) {
    const source = new EventSource(list.dataset.taskStream);
    let cleared = false;
    const add = (text, state) => {
      if (!cleared) {
        list.textContent = '';
        cleared = true;
      }
      const item = document.createElement('li');
      item.textContent = text;
      if (state) item.dataset.state = state;
      list.appendChild(item);
    };
    const partsText = (message) => ((message && message.parts) || []).map((part) => (part.kind === 'text' ? part.text : JSON.stringify(part.data))).join(' ');
    const stop = () => {
      source.close();
      list.dataset.ended = 'true';
    };
    source.addEventListener('message', (event) => {
      let result;
      try {
        result = JSON.parse(event.data).result;
      } catch {
        return;
      }
      if (!result || !result.status || result.kind === 'task') return;
      const status = result.status;
      const when = status.timestamp ? new Date(status.timestamp) : null;
      const said = partsText(status.message);
      add(status.state + (when && !Number.isNaN(when.getTime()) ? ' at ' + timeFormat.format(when) : '') + (said ? ': ' + said : ''), status.state);
      if (result.final) document.body.dispatchEvent(new CustomEvent('ward:task-final'));
    });
    source.addEventListener('task-end', () => {
      stop();
      document.body.dispatchEvent(new CustomEvent('ward:task-final'));
    });
    source.addEventListener('task-error', (event) => {
      stop();
      let message = 'The task could not be followed.';
      try {
        message = JSON.parse(event.data).message || message;
      } catch {
        // keep the sentence above
      }
      add(message, 'error');
    });
    source.addEventListener('error', () => {
      if (list.dataset.ended === 'true') return;
      // A reconnection would replay the task from its start into the same list: stop, and say so.
      stop();
      add('The stream was interrupted; reload the page to follow the task again.', 'interrupted');
    });
    window.addEventListener('pagehide', () => source.close());
  }

  /**
   * The settings search (settings-table.ts) filters as one types: the server's `?q=` does the same
   * without script. Every word typed must appear in a row's `data-search` words.
   */
  function filterSettings(form) {
    const input = form.querySelector('input[type="search"]');
    const count = document.getElementById('setting-count');
    const apply = () => {
      const words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
      let shown = 0;
      let total = 0;
      document.querySelectorAll('[data-setting-group]').forEach((group) => {
        let inGroup = 0;
        group.querySelectorAll('tr[data-search]').forEach((row) => {
          const match = words.every((word) => row.dataset.search.includes(word));
          row.hidden = !match;
          total += 1;
          if (match) inGroup += 1;
        });
        group.hidden = inGroup === 0;
        // Groups are collapsed until asked for; a search opens those it matches (and closes again when cleared).
        const details = group.querySelector('[data-setting-details]');
        if (details) details.open = words.length > 0 && inGroup > 0;
        shown += inGroup;
      });
      if (count) count.textContent = shown === total ? `All ${total} settings shown.` : shown === 0 ? `No setting matches “${input.value.trim()}”.` : `${shown} of ${total} settings match.`;
    };
    input.addEventListener('input', apply);
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      apply();
      const url = new URL(window.location.href);
      if (input.value.trim()) url.searchParams.set('q', input.value.trim());
      else url.searchParams.delete('q');
      window.history.replaceState(null, '', url);
    });
  }

  document.addEventListener('DOMContentLoaded', () => {
    localiseTimes(document);
    document.querySelectorAll('form[data-setting-search]').forEach(filterSettings);
    // Live sections arrive out of band, beside the element that asked: write every time anew (cheap).
    document.body.addEventListener('htmx:afterSettle', () => localiseTimes(document));
    // A section the person is working in (focus inside it) is not replaced under them; it catches up
    // with the next change after they leave it.
    document.body.addEventListener('htmx:oobBeforeSwap', (event) => {
      const target = event.detail.target;
      if (target && target.contains(document.activeElement) && document.activeElement !== document.body) event.preventDefault();
    });
    if (document.body.dataset.live === 'on' && 'EventSource' in window) follow();
    const taskStates = document.querySelector('[data-task-stream]');
    if (taskStates && 'EventSource' in window) followTask(taskStates);
  });
})();
