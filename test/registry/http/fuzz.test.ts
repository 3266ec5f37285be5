/**
 * Property-based fuzzing of every registry operation, driven by the OpenAPI document (issue 19, item
 * 2). Properties, for each drawn request: no 500 (a 502/503 only as DEPENDENCY_UNAVAILABLE or
 * SERVICE_UNAVAILABLE, both documented and retryable); every non-2xx answer is the error envelope
 * with a code from the one error table and that code's status; a refused request changes nothing
 * (the committed event position, which every mutation advances, stays put).
 *
 * CI draws FUZZ_RUNS (default 400) requests per backend; `npm run fuzz` draws 100 000 on SQLite, and
 * on PostgreSQL too when TEST_DATABASE_URL is set. A failure prints the seed and the shrunk request.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { ERROR_CODES } from '../../../src/core/errors.ts';
import { OIDF_ERROR_STATUS, type OidfErrorCode } from '../../../src/contract/openid-federation.ts';
import { lastCommittedSeq } from '../../../src/registry/storage/stores/event-store.ts';
import { operationsOf, requestFor, type FuzzRequest } from '../../helpers/openapi-fuzz.ts';
import { BACKENDS, agentBody, buildTestRegistry, registerAgent } from '../../helpers/registry.ts';

const RUNS = Number(process.env.FUZZ_RUNS ?? 400);

/** Streams never end on their own, and these drive a browser: fuzzed elsewhere or not at all. */
function skip(method: string, path: string, op: any): boolean {
  const produces = Object.keys(op.responses?.['200']?.content ?? {});
  if (produces.includes('text/event-stream')) return true;
  if (path === '/v1/events/stream' || path.endsWith('/live')) return true;
  if (path === '/v1/admin/computer-use/screenshot') return true;
  return method === 'POST' && path === '/v1/admin/computer-use/runs';
}

function checkAnswer(request: FuzzRequest, status: number, contentType: string, text: string): void {
  const where = `${request.label} → ${status}: ${text.slice(0, 300)}`;
  assert.notEqual(status, 500, where);
  if (status < 400) return;
  if (request.url.startsWith('/fhir/')) return checkOutcome(status, contentType, text, where);
  assert.match(contentType, /^application\/json/, where);
  if (isOidfRefusal(request, text)) return checkOidfError(status, text, where);
  const body = JSON.parse(text) as { error?: { code?: string; message?: unknown; details?: unknown; retryable?: unknown; retry_after_ms?: unknown } };
  const code = body.error?.code as keyof typeof ERROR_CODES | undefined;
  assert.ok(code !== undefined && code in ERROR_CODES, `an undocumented code: ${where}`);
  assert.equal(ERROR_CODES[code].status, status, `the status of ${code}: ${where}`);
  assert.equal(typeof body.error?.message, 'string', where);
  assert.equal(typeof body.error?.details, 'object', where);
  assert.equal(body.error?.retryable, ERROR_CODES[code].retryable, where);
  if (status >= 500) assert.ok(code === 'DEPENDENCY_UNAVAILABLE' || code === 'SERVICE_UNAVAILABLE', where);
}

/** The OpenID Federation endpoints refuse in OIDF's format (docs/federation.md); limits and guards before them keep the envelope. */
function isOidfRefusal(request: FuzzRequest, text: string): boolean {
  const path = request.url.split('?')[0] ?? '';
  return (path.startsWith('/v1/oidf/') || path === '/.well-known/openid-federation') && typeof (JSON.parse(text) as { error?: unknown }).error === 'string';
}

function checkOidfError(status: number, text: string, where: string): void {
  const body = JSON.parse(text) as { error: string; error_description?: unknown };
  assert.ok(body.error in OIDF_ERROR_STATUS, `an undocumented OIDF error: ${where}`);
  // A rate limit keeps HTTP's 429 (with Retry-After); every other status is OIDF's for its code.
  if (!(body.error === 'temporarily_unavailable' && status === 429)) assert.equal(OIDF_ERROR_STATUS[body.error as OidfErrorCode], status, `the status of ${body.error}: ${where}`);
  assert.equal(typeof body.error_description, 'string', where);
  assert.ok(status < 500 || body.error === 'temporarily_unavailable', where);
}

/** The FHIR directory answers errors as OperationOutcomes, the Ward code in `issue[0].details.coding`. */
function checkOutcome(status: number, contentType: string, text: string, where: string): void {
  assert.match(contentType, /^application\/fhir\+json/, where);
  const body = JSON.parse(text) as { resourceType?: string; issue?: Array<{ details?: { coding?: Array<{ code?: string }> } }> };
  assert.equal(body.resourceType, 'OperationOutcome', where);
  const code = body.issue?.[0]?.details?.coding?.[0]?.code as keyof typeof ERROR_CODES | undefined;
  assert.ok(code !== undefined && code in ERROR_CODES, `an undocumented code: ${where}`);
  assert.equal(ERROR_CODES[code].status, status, `the status of ${code}: ${where}`);
}

for (const backend of BACKENDS) {
  describe(`fuzzing every operation from the OpenAPI document [${backend}]`, () => {
    test(`${RUNS} drawn requests: no 500, the envelope with a documented code, no change when refused`, async (t) => {
      const registry = await buildTestRegistry(t, backend, {
        env: { REGISTRY_HEALTH_PROBES: 'false', REGISTRY_FEDERATION_TIMEOUT_MS: '300' },
      });
      const doc = (await registry.call({ method: 'GET', url: '/v1/openapi.json' })).body;
      const operations = operationsOf(doc, skip);
      assert.ok(operations.length >= 40, `${operations.length} operations`);
      const agents = [await registerAgent(registry), await registerAgent(registry, agentBody({ display_name: 'Second agent' }))];
      const ids = agents.map((agent: { agent_id: string }) => agent.agent_id);
      const seen = new Map<string, number>();

      await fc.assert(
        fc.asyncProperty(fc.constantFrom(...operations).chain((operation) => requestFor(operation, ids)), async (request) => {
          const before = await lastCommittedSeq(registry.storage.db);
          const response = await registry.app.inject({
            method: request.method as 'GET',
            url: request.url,
            headers: request.headers,
            ...(request.payload === undefined ? {} : { payload: request.payload }),
          });
          seen.set(`${response.statusCode}`, (seen.get(`${response.statusCode}`) ?? 0) + 1);
          checkAnswer(request, response.statusCode, String(response.headers['content-type'] ?? ''), response.body);
          if (response.statusCode >= 400) assert.equal(await lastCommittedSeq(registry.storage.db), before, `a refused request changed state: ${request.label}`);
        }),
        { numRuns: RUNS, ...(process.env.FUZZ_SEED ? { seed: Number(process.env.FUZZ_SEED) } : {}) },
      );
      t.diagnostic(`statuses: ${[...seen].sort().map(([status, count]) => `${status}×${count}`).join(' ')}`);
    });
  });
}
