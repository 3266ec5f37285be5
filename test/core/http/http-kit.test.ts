import assert from 'node:assert/strict';
import { test } from 'node:test';
import Fastify from 'fastify';
import { firstHeader, httpKit, requestLogFields, serverLogger } from '../../../src/core/http/http-kit.ts';
import { createServerMetrics, probesAndMetrics } from '../../../src/core/http/http-metrics.ts';

test('a server that registers the probes without the HTTP kit fails at start-up, naming what is missing', async (t) => {
  const app = Fastify();
  t.after(() => app.close());
  await assert.rejects(async () => app.register(probesAndMetrics), /'httpMetrics' required by 'ward-probes'/);
});

test('with the HTTP kit first the probes answer and every answer is counted', async (t) => {
  const app = Fastify();
  t.after(() => app.close());
  await app.register(httpKit, { metrics: createServerMetrics('gateway') });
  await app.register(probesAndMetrics);
  assert.equal((await app.inject({ method: 'GET', url: '/livez' })).statusCode, 200);
  const exposition = await app.inject({ method: 'GET', url: '/metrics', remoteAddress: '127.0.0.1' });
  assert.match(exposition.body, /ward_http_requests_total\{method="GET",route="\/livez",status="200",server="gateway"\} 1/);
});

test('the request log line names the method, route template and id, never the URL', () => {
  assert.deepEqual(requestLogFields({ method: 'GET', routeOptions: { url: '/v1/agents/:id' }, id: 'r1' }), { method: 'GET', route: '/v1/agents/:id', id: 'r1' });
  assert.deepEqual(requestLogFields({ method: 'GET', id: 'r2' }), { method: 'GET', route: '(unmatched)', id: 'r2' });
  assert.equal(serverLogger(false), false);
  assert.deepEqual(Object.keys(serverLogger({ level: 'info' })), ['level', 'serializers']);
});

test('firstHeader reads the first of repeated values', () => {
  assert.equal(firstHeader({ 'x-a': ['one', 'two'] }, 'x-a'), 'one');
  assert.equal(firstHeader({ 'x-a': 'one' }, 'x-a'), 'one');
  assert.equal(firstHeader({}, 'x-a'), undefined);
});
