/**
 * Security round 4, finding 4 (issue 41): the PHI guard's cost per request is bounded, and one caller's
 * large bodies do not hold up others. A body with more text than REGISTRY_PHI_MAX_TEXT_CHARS is 413
 * before it is scanned; a large body is scanned off the event loop (a worker thread) with the same
 * findings; while large bodies are being scanned, `/health` from another client answers first. Speed
 * itself is measured in `npm run bench:phi` and docs/performance.md, not here.
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { describe, test } from 'node:test';
import { startRegistry } from '../../helpers/federation.ts';
import { BACKENDS, agentBody, buildTestRegistry, writeHeaders } from '../../helpers/registry.ts';

const NAMES = ['Dr Amelia Hart', 'Nurse Oliver Grant', 'Dr Priya Nair', 'Mr Tom Reed', 'Dr Hannah Cole'];
const CONDITIONS = ['asthma', 'type 2 diabetes', 'heart failure', 'COPD', 'atrial fibrillation'];

/** `chars` of clinician names and conditions, as many short notes (the flood of the issue). */
function notes(chars: number): string[] {
  const out: string[] = [];
  let total = 0;
  for (let i = 0; total < chars; i += 1) {
    const note = `${NAMES[i % 5]} reviews ${CONDITIONS[(i * 3) % 5]} clinics on ward ${i % 40}.`;
    out.push(note);
    total += note.length;
  }
  return out;
}

for (const backend of BACKENDS) {
  describe(`the PHI guard's cost per request [${backend}]`, () => {
    test('a body with more text than the guard reads is 413 before any scan, nothing stored; one just under is scanned (off the loop) as before', async (t) => {
      const registry = await buildTestRegistry(t, backend, { env: { REGISTRY_PHI_MAX_TEXT_CHARS: '40000' } });
      const over = await registry.call({ method: 'POST', url: '/v1/agents', headers: writeHeaders(), payload: agentBody({ policy_tags: { notes: notes(41_000) } }) });
      assert.equal(over.status, 413, JSON.stringify(over.body));
      assert.equal(over.body.error.code, 'PAYLOAD_TOO_LARGE');
      assert.equal(over.body.error.details.max_text_chars, 40_000);
      const count = await registry.storage.db.selectFrom('agents').select('id').execute();
      assert.equal(count.length, 0);

      // Over the inline threshold, under the cap: scanned in the worker, with the same findings and pointers.
      const phi = notes(30_000);
      phi.push('Patient NHS number 943 476 5919, DOB 12/03/1980.');
      const refused = await registry.call({ method: 'POST', url: '/v1/agents', headers: writeHeaders(), payload: agentBody({ policy_tags: { notes: phi } }) });
      assert.equal(refused.status, 422, JSON.stringify(refused.body));
      assert.equal(refused.body.error.code, 'PHI_DETECTED');
      assert.ok(refused.body.error.details.findings.every((f: { in: string; pointer: string }) => f.in === 'body' && f.pointer === `/policy_tags/notes/${phi.length - 1}`), JSON.stringify(refused.body.error.details.findings));
      const clean = await registry.call({ method: 'POST', url: '/v1/agents', headers: writeHeaders(), payload: agentBody({ policy_tags: { notes: notes(30_000) } }) });
      // Past the guard (the schema then has its own say about such tags).
      assert.equal(clean.body.error?.code, 'VALIDATION_ERROR', JSON.stringify(clean.body));
    });

    test('while one client floods large bodies, /health from another answers before any of them', async (t) => {
      const registry = await startRegistry(t, backend, {});
      const port = Number(new URL(registry.baseUrl).port);
      const order: string[] = [];
      const send = (name: string, method: string, path: string, body?: string) =>
        new Promise<string>((resolve, reject) => {
          const call = httpRequest({ host: '127.0.0.1', port, method, path, headers: body ? { 'content-type': 'application/json', ...writeHeaders() } : {} }, (response) => {
            let text = '';
            response.on('data', (chunk) => (text += chunk));
            response.on('end', () => {
              order.push(name);
              resolve(`${response.statusCode} ${(JSON.parse(text) as { error?: { code?: string } }).error?.code ?? ''}`.trim());
            });
          });
          call.on('error', reject);
          call.end(body);
        });
      const large = JSON.stringify(agentBody({ policy_tags: { notes: notes(200_000) } }));
      const flood = [1, 2, 3, 4].map((i) => send(`large ${i}`, 'POST', '/v1/agents', large));
      // Once the flood is on its way, another client asks for /health.
      await new Promise((resolve) => setImmediate(resolve));
      const health = await send('health', 'GET', '/health');
      assert.equal(health, '200');
      const statuses = await Promise.all(flood);
      assert.ok(statuses.every((status) => status === '422 VALIDATION_ERROR'), `scanned, then refused by the schema: ${statuses.join()}`);
      assert.equal(order[0], 'health', `answered first: ${order.join(', ')}`);
    });
  });
}
