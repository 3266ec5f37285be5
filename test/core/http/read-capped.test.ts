import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BodyTooLargeError, readBodyCapped } from '../../../src/core/http/read-capped.ts';

/** A streamed response (no content-length) of the given chunks; records whether it was cancelled. */
function streamed(chunks: Uint8Array[]) {
  const state = { cancelled: false, pulled: 0 };
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = chunks[state.pulled++];
      if (next) controller.enqueue(next);
      else controller.close();
    },
    cancel() {
      state.cancelled = true;
    },
  });
  return { response: new Response(body), state };
}

test('a body within the cap reads as UTF-8 text, multi-byte characters split across chunks included', async () => {
  const bytes = new TextEncoder().encode('{"name":"Zoë 🩺"}');
  const { response } = streamed([bytes.slice(0, 12), bytes.slice(12, 15), bytes.slice(15)]);
  assert.equal(await readBodyCapped(response, bytes.length), '{"name":"Zoë 🩺"}');
});

test('the cap counts bytes, not UTF-16 units', async () => {
  const text = 'é'.repeat(10); // 10 units, 20 bytes
  await assert.rejects(readBodyCapped(new Response(text), 19), BodyTooLargeError);
  assert.equal(await readBodyCapped(new Response(text), 20), text);
});

test('past the cap the stream is cancelled and not read further', async () => {
  const { response, state } = streamed([new Uint8Array(8), new Uint8Array(8), new Uint8Array(8), new Uint8Array(8)]);
  await assert.rejects(readBodyCapped(response, 12), (error: unknown) => error instanceof BodyTooLargeError && error.maxBytes === 12 && /larger than 12 bytes/.test(error.message));
  assert.equal(state.cancelled, true);
  assert.ok(state.pulled < 4, 'the rest of the stream was never pulled');
});

test('a declared content-length over the cap fails before reading', async () => {
  const { response: inner, state } = streamed([new Uint8Array(4)]);
  const response = new Response(inner.body, { headers: { 'content-length': '1000' } });
  await assert.rejects(readBodyCapped(response, 100), BodyTooLargeError);
  assert.equal(state.cancelled, true);
});

test('an empty body reads as the empty string; a bad cap is a programming error', async () => {
  assert.equal(await readBodyCapped(new Response(null), 0), '');
  await assert.rejects(readBodyCapped(new Response('x'), -1), RangeError);
  await assert.rejects(readBodyCapped(new Response('x'), 1.5), RangeError);
});
