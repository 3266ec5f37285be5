/**
 * Live sections: parts of a page that follow the registry. A page marks them (`Section live=…`); the
 * layout ends the page with one hidden refresher per page address, which on `ward:change` (fired by
 * web/console.js for each event of the registry's stream) has htmx fetch that address once and swap
 * every marked section out of band by its id. One request per change for the whole page, however many
 * sections it has; forms are never inside a section, so nothing a person is typing is replaced.
 *
 * Sections are registered while the page renders: rendering is synchronous and in document order, and
 * the refresher comes after `<main>`, so it sees every section of its page.
 */
import { html, type View } from './html.ts';

let rendering: Map<string, string[]> | undefined;

/** Called by a live section as it renders: `url` is where a fresh copy of it is. */
export function registerLiveSection(id: string, url: string): void {
  if (!rendering) return;
  const ids = rendering.get(url) ?? [];
  ids.push(id);
  rendering.set(url, ids);
}

/** Renders `render()` collecting the live sections its output contains. */
export function withLiveSections<T>(render: () => T): T {
  const outer = rendering;
  rendering = new Map();
  try {
    return render();
  } finally {
    rendering = outer;
  }
}

/** The hidden refreshers for the sections rendered so far (placed after `<main>`). */
export function LiveRefreshers(): View {
  const groups = [...(rendering ?? new Map<string, string[]>()).entries()];
  return groups.map(
    ([url, ids], index) =>
      html`<div hidden="" id=${`live-refresh-${index}`} class="live-refresh" hx-get=${url} hx-trigger="ward:change from:body delay:150ms" hx-select-oob=${ids.map((id) => `#${id}`).join(',')} hx-swap="none"></div>`,
  );
}
