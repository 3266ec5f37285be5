/**
 * The request log (issue 33 item 11): one line per answer from the HTTP kit, never Fastify's two;
 * REGISTRY_REQUEST_LOG chooses all, errors or none, and unset it is errors outside production (so
 * `npm start`'s summary is not drowned) and all in production.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { loadConfig } from '../../../src/core/config.ts';
import { requestLogMode } from '../../../src/core/http/http-kit.ts';
import { buildRegistry } from '../../../src/registry/app.ts';
import { openTestStorage } from '../../helpers/registry.ts';

async function linesFor(t: Parameters<typeof openTestStorage>[0], setting: Record<string, string>) {
  const lines: Array<Record<string, any>> = [];
  const stream = new Writable({ write: (chunk, _encoding, done) => void (lines.push(JSON.parse(String(chunk))), done()) });
  const storage = await openTestStorage(t, 'sqlite');
  const app = await buildRegistry({ config: loadConfig({ REGISTRY_ENV: 'test', REGISTRY_LOG_LEVEL: 'info', ...storage.env, ...setting }), storage, logStream: stream });
  t.after(() => app.close());
  await app.inject({ method: 'GET', url: '/v1/agents' });
  await app.inject({ method: 'GET', url: '/v1/agents/01ARZ3NDEKTSV4RRFFQ69G5FAV' });
  return lines.filter((line) => line.reqId !== undefined);
}

test('all: one line per answer with route, status and time; errors: the refusal alone; none: nothing; Fastify logs none of its own', async (t) => {
  const all = await linesFor(t, { REGISTRY_REQUEST_LOG: 'all' });
  assert.deepEqual(all.map((line) => [line.msg, line.req.route, line.status, line.level]), [
    ['request', '/v1/agents', 200, 30],
    ['request', '/v1/agents/:id', 404, 40],
  ]);
  assert.ok(all.every((line) => typeof line.ms === 'number'));
  const errors = await linesFor(t, { REGISTRY_REQUEST_LOG: 'errors' });
  assert.deepEqual(errors.map((line) => line.status), [404]);
  assert.deepEqual(await linesFor(t, { REGISTRY_REQUEST_LOG: 'none' }), []);
});

test('unset: errors in development and test, all in production', () => {
  assert.equal(requestLogMode(undefined, 'development'), 'errors');
  assert.equal(requestLogMode(undefined, 'test'), 'errors');
  assert.equal(requestLogMode(undefined, 'production'), 'all');
  assert.equal(requestLogMode('none', 'production'), 'none');
});
