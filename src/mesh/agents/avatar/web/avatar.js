/* global document, fetch, Audio, Blob, performance, requestAnimationFrame, setTimeout, clearTimeout, atob */
// The clinician avatar's development page (docs/avatar.md, "Web page"). It talks to the agent that
// served it, by URLs relative to the page (so it works at the agent's root, `/avatar`, and through the
// gateway, `/rpc/clinician_avatar/avatar`): GET dev/token, JSON-RPC on POST ./, POST tts. Every text from the patient, the clinician
// or the agent goes into the page through textContent, never as markup.

const $ = (id) => document.getElementById(id);

const state = { token: '', sub: '', expiresAt: 0, rpcId: 0, sessionId: '', maxChars: 1000, speech: Promise.resolve() };

function setStatus(text, kind = 'info') {
  $('status').textContent = text;
  $('status').dataset.kind = kind;
}

/** A development token, fetched again shortly before the current one expires. */
async function credentials() {
  if (state.token && Date.now() < state.expiresAt - 30_000) return;
  const response = await fetch('dev/token', { cache: 'no-store' });
  if (response.status === 404) throw new Error('Development tokens are off on this agent (MESH_JWT_SECRET is not the default), so this page cannot call it.');
  if (!response.ok) throw new Error(`This agent refused a development token (HTTP ${response.status}); open the page from the same machine.`);
  const body = await response.json();
  state.token = body.token;
  state.sub = body.sub;
  state.expiresAt = Date.now() + body.expires_in * 1000;
}

const authHeaders = () => ({ authorization: `Bearer ${state.token}`, 'x-agent-id': state.sub, 'content-type': 'application/json' });

/** Words for an error envelope: its message and, for bad params, which fields. */
function describeError(error) {
  const details = (error.data?.errors ?? []).map((entry) => `${entry.pointer} ${entry.reason}`);
  if (error.code === -32013) return 'The session has ended or expired; please start a new one.';
  return [error.message, ...details, error.data?.hint ?? ''].filter(Boolean).join(' — ');
}

async function rpc(method, params) {
  await credentials();
  state.rpcId += 1;
  const response = await fetch('./', { method: 'POST', headers: authHeaders(), body: JSON.stringify({ jsonrpc: '2.0', id: state.rpcId, method, params }) });
  const body = await response.json();
  if (body.error) throw new Error(describeError(body.error));
  return body.result;
}

function addMessage(role, text, escalated = false) {
  const entry = document.createElement('div');
  entry.className = `msg ${role}${escalated ? ' escalated' : ''}`;
  entry.dataset.role = role;
  entry.textContent = text;
  $('chat').append(entry);
  entry.scrollIntoView({ block: 'nearest' });
}

function renderProgress(result) {
  $('phase').textContent = result.consultation_phase;
  $('framework').textContent = result.framework;
  const progress = result.framework_progress;
  $('progress').dataset.completed = String(progress.completed);
  $('progress').replaceChildren(
    ...progress.steps.map((step) => {
      const item = document.createElement('li');
      item.dataset.key = step.key;
      item.dataset.status = step.status;
      item.textContent = step.label;
      return item;
    }),
  );
}

function renderSummary(summary) {
  const rows = [
    ['Framework', summary.framework],
    ['Outcome', summary.consultation_phase],
    ['Duration', `${summary.duration_s} s`],
    ['Red flags', summary.red_flags.length > 0 ? summary.red_flags.join(', ') : 'none'],
    ...summary.findings.map((step) => [
      step.label,
      step.findings.length > 0 ? step.findings.map((finding) => (finding.present ? finding.finding : `no ${finding.finding}`)).join(', ') : 'not covered',
    ]),
  ];
  $('summary-list').replaceChildren(
    ...rows.flatMap(([term, value]) => {
      const dt = document.createElement('dt');
      dt.textContent = term;
      const dd = document.createElement('dd');
      dd.textContent = value;
      return [dt, dd];
    }),
  );
  $('summary').hidden = false;
}

// --- speech and the mouth ---------------------------------------------------------------------------

function setViseme(viseme) {
  const mouth = $('mouth');
  if (mouth.dataset.viseme !== viseme) mouth.dataset.viseme = viseme;
}

function visemeAt(cues, ms) {
  const cue = cues.find((entry) => entry.start_ms <= ms && ms < entry.end_ms);
  return cue ? cue.viseme : 'sil';
}

/** Splits a long reply into pieces the speech endpoint takes, at sentence ends where possible. */
function speechChunks(text, max) {
  const chunks = [];
  let current = '';
  for (const sentence of text.split(/(?<=[.!?])\s+/)) {
    for (const piece of sentence.length > max ? sentence.match(new RegExp(`.{1,${max}}(\\s|$)`, 'g')) ?? [sentence.slice(0, max)] : [sentence]) {
      if (current && current.length + 1 + piece.length > max) {
        chunks.push(current);
        current = '';
      }
      current = current ? `${current} ${piece.trim()}` : piece.trim();
    }
  }
  if (current) chunks.push(current);
  return chunks;
}

/**
 * Plays one synthesized piece and moves the mouth along its viseme timeline. The clock is the audio
 * element's currentTime while audio really plays; when it cannot (no output device, autoplay refused,
 * a decoding error) the same timeline runs on a timer, so the mouth still speaks.
 */
function play(speech) {
  return new Promise((resolve) => {
    const mouth = $('mouth');
    const bytes = Uint8Array.from(atob(speech.audio_b64), (char) => char.charCodeAt(0));
    const url = URL.createObjectURL(new Blob([bytes], { type: speech.mime_type }));
    const audio = new Audio(url);
    let finished = false;
    let timerStart = 0;
    const useTimer = () => {
      if (mouth.dataset.animation === 'timer' || finished) return;
      timerStart = performance.now() - audio.currentTime * 1000;
      mouth.dataset.animation = 'timer';
      audio.muted = true;
    };
    const now = () => (mouth.dataset.animation === 'timer' ? performance.now() - timerStart : audio.currentTime * 1000);
    const finish = () => {
      if (finished) return;
      finished = true;
      clearTimeout(watchdog);
      clearTimeout(deadline);
      audio.pause();
      URL.revokeObjectURL(url);
      setViseme('sil');
      mouth.dataset.animation = 'idle';
      mouth.dataset.speaking = 'false';
      resolve();
    };
    const frame = () => {
      if (finished) return;
      const ms = now();
      if (mouth.dataset.animation === 'timer' && ms >= speech.duration_ms) return finish();
      setViseme(visemeAt(speech.visemes, ms));
      requestAnimationFrame(frame);
    };
    // Audio that has not moved shortly after play() resolved has nowhere to go: switch to the timer.
    const watchdog = setTimeout(() => {
      if (audio.currentTime === 0) useTimer();
    }, 750);
    const deadline = setTimeout(finish, speech.duration_ms + 3000);
    mouth.dataset.animation = 'audio';
    mouth.dataset.speaking = 'true';
    audio.addEventListener('timeupdate', () => mouth.dataset.animation === 'audio' && setViseme(visemeAt(speech.visemes, now())));
    audio.addEventListener('ended', () => (mouth.dataset.animation === 'audio' ? finish() : undefined));
    audio.addEventListener('error', useTimer);
    audio.play().catch(useTimer);
    requestAnimationFrame(frame);
  });
}

async function speak(text) {
  if (!$('speak').checked) return;
  for (const chunk of speechChunks(text, state.maxChars)) {
    await credentials();
    const response = await fetch('tts', { method: 'POST', headers: authHeaders(), body: JSON.stringify({ text: chunk, voice: $('voice').value || undefined }) });
    const body = await response.json();
    if (!response.ok) {
      setStatus(`Speech unavailable: ${describeError(body.error)}`, 'error');
      return;
    }
    await play(body);
  }
}

/** Replies are spoken one after another, never over each other. */
function say(text) {
  state.speech = state.speech.then(() => speak(text)).catch((error) => setStatus(`Speech failed: ${error.message}`, 'error'));
}

async function loadVoices() {
  await credentials();
  const response = await fetch('tts/voices', { headers: authHeaders() });
  if (!response.ok) return;
  const body = await response.json();
  state.maxChars = body.max_text_chars;
  $('voice').replaceChildren(
    ...body.voices.map((voice) => {
      const option = document.createElement('option');
      option.value = voice.id;
      option.textContent = voice.name;
      option.selected = voice.id === body.default_voice;
      return option;
    }),
  );
}

// --- the consultation -------------------------------------------------------------------------------

async function startSession(event) {
  event.preventDefault();
  setStatus('Starting…');
  try {
    const result = await rpc('avatar/start_session', {
      patient_case: {
        chief_complaint: $('complaint').value.trim(),
        age: Number($('age').value),
        gender: $('gender').value,
        urgency: $('urgency').value,
      },
      persona: { name: $('persona-name').value.trim(), role: $('persona-role').value.trim() },
    });
    state.sessionId = result.session_id;
    $('chat').replaceChildren();
    $('summary').hidden = true;
    $('start-form').hidden = true;
    $('message-form').hidden = false;
    $('message').disabled = false;
    $('send').disabled = false;
    addMessage('clinician', result.greeting);
    renderProgress(result);
    setStatus(`Consultation started (${result.framework}).`);
    $('message').focus();
    say(result.greeting);
  } catch (error) {
    setStatus(error.message, 'error');
  }
}

async function sendMessage(event) {
  event.preventDefault();
  const message = $('message').value.trim();
  if (!message) return;
  $('message').value = '';
  addMessage('patient', message);
  try {
    const result = await rpc('avatar/patient_message', { session_id: state.sessionId, message });
    const closed = result.consultation_phase === 'completed' || result.consultation_phase === 'escalated';
    addMessage('clinician', result.clinician_response, result.consultation_phase === 'escalated');
    renderProgress(result);
    $('message').disabled = closed;
    $('send').disabled = closed;
    setStatus(closed ? `Consultation ${result.consultation_phase}.` : '');
    say(result.clinician_response);
  } catch (error) {
    setStatus(error.message, 'error');
  }
}

async function endSession() {
  try {
    const summary = await rpc('avatar/end_session', { session_id: state.sessionId });
    renderProgress(summary);
    renderSummary(summary);
    $('message-form').hidden = true;
    $('start-form').hidden = false;
    setStatus('Consultation ended.');
  } catch (error) {
    setStatus(error.message, 'error');
  }
}

async function main() {
  $('start-form').addEventListener('submit', startSession);
  $('message-form').addEventListener('submit', sendMessage);
  $('end').addEventListener('click', endSession);
  try {
    await credentials();
  } catch (error) {
    setStatus(error.message, 'error');
    return;
  }
  try {
    await loadVoices();
  } catch {
    $('speak').checked = false;
  }
  $('start').disabled = false;
  document.body.dataset.ready = 'true';
  setStatus('Ready: describe the patient case and start.');
}

main();
