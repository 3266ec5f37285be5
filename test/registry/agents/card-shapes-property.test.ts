/**
 * Security round 4 (issue 41), the property over card shapes: however a card is built (depth, width,
 * sizes, signature counts, redirects, slow key sets, PHI in its text), `POST /v1/agents/from-card`
 * never answers 5xx, never stores PHI, and never holds the request past the read's one deadline: when
 * the answer comes, no key set that would answer only after the deadline has answered, and every
 * request the registry made to the card host is over. A hostile card server on loopback, both backends.
 */
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { signAgentCard } from '../../../src/core/crypto/agent-card-signature.ts';
import { BACKENDS, buildTestRegistry, writeHeaders } from '../../helpers/registry.ts';
import { eventually } from '../../helpers/eventually.ts';
import { PHI_DESCRIPTION, cardFor, cardKeyPair, startCardServer } from './card-fixtures.ts';

const RUNS = Number(process.env.CARD_PROPERTY_RUNS ?? 20);
const DEADLINE_MS = 600;
/** A slow key set answers long after the deadline: if it answered before the registry did, the read outlived its deadline. */
const SLOW_MS = 8 * DEADLINE_MS;
const PHI_FRAGMENTS = ['943 476 5919', '00482913', '123-45-6789', 'Jane Smith'];

type Shape = {
  depth: number;
  width: number;
  descriptionChars: number;
  phi: boolean;
  signatures: number;
  keySets: number;
  slowKeySets: boolean;
  redirects: number;
};

const shapes: fc.Arbitrary<Shape> = fc.record({
  depth: fc.oneof(fc.integer({ min: 0, max: 40 }), fc.constantFrom(0, 2000)),
  width: fc.oneof(fc.integer({ min: 0, max: 50 }), fc.constant(12_000)),
  descriptionChars: fc.oneof(fc.integer({ min: 0, max: 2000 }), fc.constant(70_000)),
  phi: fc.boolean(),
  signatures: fc.oneof(fc.integer({ min: 0, max: 10 }), fc.constant(400)),
  keySets: fc.integer({ min: 1, max: 4 }),
  slowKeySets: fc.boolean(),
  redirects: fc.integer({ min: 0, max: 5 }),
});

function nested(levels: number): unknown {
  let value: unknown = { leaf: true };
  for (let i = 0; i < levels; i += 1) value = { a: value };
  return value;
}

for (const backend of BACKENDS) {
  describe(`cards of every shape [${backend}]`, () => {
    test('never 5xx, never PHI stored, never past the read deadline', { timeout: 600_000 }, async (t) => {
      const server = await startCardServer(t);
      const registry = await buildTestRegistry(t, backend, { env: { REGISTRY_CARD_TIMEOUT_MS: String(DEADLINE_MS), REGISTRY_CARD_MAX_BYTES: '1048576' } });
      const key = await cardKeyPair('k1');
      let run = 0;
      await fc.assert(
        fc.asyncProperty(shapes, async (shape) => {
          run += 1;
          const base = `/r${run}`;
          const open = new Set<IncomingMessage>();
          let slowAnswered = false;
          const track = (request: IncomingMessage) => {
            open.add(request);
            request.socket.once('close', () => open.delete(request));
          };
          const description = shape.phi ? PHI_DESCRIPTION : 'x'.repeat(shape.descriptionChars);
          const card = cardFor(server.origin, {
            description,
            capabilities: { streaming: true, extensions: [{ uri: 'https://example.org/ext', params: nested(shape.depth) }] },
            skills: [{ id: 'summarise', name: 'Summarise', tags: Array.from({ length: shape.width }, () => 't') }],
          });
          const signatures = [];
          for (let i = 0; i < Math.min(shape.signatures, 10); i += 1) {
            // A card outside the bounds cannot be signed (its canonical form is never built): a signature of the right shape stands in.
            const jku = `${server.origin}${base}/keys/${i % shape.keySets}.json`;
            const header = Buffer.from(JSON.stringify({ alg: 'ES256', typ: 'JOSE', kid: 'k1', jku })).toString('base64url');
            signatures.push(await signAgentCard(card, { privateKey: key.privateKey, alg: 'ES256', kid: 'k1', jku }).catch(() => ({ protected: header, signature: 'AAAA' })));
          }
          while (signatures.length < shape.signatures) signatures.push(signatures[0] ?? { protected: 'e30', signature: 'AA' });
          const served = shape.signatures > 0 ? { ...card, signatures } : card;
          const json = (response: ServerResponse, body: unknown) => response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
          for (let hop = 0; hop < shape.redirects; hop += 1) {
            server.routes.set(`${base}/hop${hop}`, (request, response) => {
              track(request);
              response.writeHead(302, { location: hop + 1 < shape.redirects ? `${base}/hop${hop + 1}` : `${base}/card.json` }).end();
            });
          }
          server.routes.set(`${base}/card.json`, (request, response) => {
            track(request);
            json(response, served);
          });
          for (let i = 0; i < shape.keySets; i += 1) {
            server.routes.set(`${base}/keys/${i}.json`, (request, response) => {
              track(request);
              if (!shape.slowKeySets) return void json(response, { keys: [key.jwk] });
              const timer = setTimeout(() => {
                slowAnswered = true;
                json(response, { keys: [key.jwk] });
              }, SLOW_MS);
              request.socket.once('close', () => clearTimeout(timer));
            });
          }
          const url = `${server.origin}${shape.redirects > 0 ? `${base}/hop0` : `${base}/card.json`}`;
          const answer = await registry.call({ method: 'POST', url: '/v1/agents/from-card', headers: writeHeaders(), payload: { card_url: url, jurisdiction: 'GB', owner: { org_id: `org-${run}` } } });
          assert.ok(answer.status < 500, `${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`);
          assert.ok([201, 422].includes(answer.status), `${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`);
          assert.equal(slowAnswered, false, 'a key set slower than the deadline never answered before the registry did');
          if (shape.phi) assert.notEqual(answer.status, 201, 'a card carrying PHI is never registered');
          // Out of bounds: refused as such, unless the read's deadline or the size limit came first.
          if (shape.depth >= 2000 || shape.width >= 12_000 || shape.signatures > 8) assert.ok(['CARD_INVALID', 'CARD_UNREACHABLE', 'CARD_TOO_LARGE'].includes(answer.body.error?.code), answer.body.error?.code);
          // Every request the registry made for this read is over (its sockets closed) soon after: eventually, not timed.
          await eventually(() => (open.size === 0 ? true : undefined), () => `no request to the card host outlives the answer (${open.size} open)`);
          return true;
        }),
        { numRuns: RUNS, ...(process.env.FUZZ_SEED ? { seed: Number(process.env.FUZZ_SEED) } : {}) },
      );
      const stored = JSON.stringify(await Promise.all(['agents', 'agent_versions', 'events', 'agent_cards'].map((table) => registry.storage.db.selectFrom(table as 'agents').selectAll().execute())));
      assert.ok(!PHI_FRAGMENTS.some((fragment) => stored.includes(fragment)), 'no PHI stored, whatever the card');
    });
  });
}
