/**
 * What `npm run image:test` asks of the registry in the container, as a client would, with Ward's own
 * client (`ward/client`): ready, its signed server metadata, a registration and its ETag (read back,
 * replaced with If-Match, refused with a stale one), a discovery whose signed answer verifies and
 * finds it. Each check throws with what it saw.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createRegistryClient } from '../../src/client/index.ts';

export type Check = { name: string; detail: string };

/** The agent the checks registered, at its last version: a restart on the same data must still hold it. */
export type Registered = { agentId: string; etag: string };

function expect(condition: unknown, what: string, saw: unknown): asserts condition {
  if (!condition) throw new Error(`${what}; saw ${typeof saw === 'string' ? saw : JSON.stringify(saw)}`);
}

/** Polls `/readyz` until it answers 200 or `deadlineMs` passes; resolves with the time it took. */
export async function waitUntilReady(baseUrl: string, startedAt: number, deadlineMs: number, alive: () => boolean): Promise<number> {
  let last = 'no answer';
  while (Date.now() - startedAt < deadlineMs) {
    if (!alive()) throw new Error(`the container stopped before /readyz answered 200 (last: ${last})`);
    try {
      const response = await fetch(`${baseUrl}/readyz`, { signal: AbortSignal.timeout(2000) });
      last = `${response.status} ${await response.text()}`;
      if (response.status === 200) return Date.now() - startedAt;
    } catch (error) {
      last = (error as Error).message;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`/readyz did not answer 200 within ${deadlineMs} ms (last: ${last})`);
}

/** The client's round: readiness, metadata, a registration with its ETag, a discovery. */
export async function registryChecks(baseUrl: string): Promise<{ checks: Check[]; registered: Registered }> {
  const client = createRegistryClient({ baseUrl });
  const checks: Check[] = [];

  const ready = await client.readiness();
  expect(ready.ok && ready.body.status === 'ready', '/readyz answers ready', ready.text);
  checks.push({ name: '/readyz', detail: Object.entries(ready.body.checks).map(([name, check]) => `${name} ${check.ok ? 'ok' : 'failing'}`).join(', ') });

  const metadata = await client.metadata();
  expect(metadata.ok && typeof metadata.body.signed_metadata === 'string', 'the server metadata carries signed_metadata', metadata.text);
  checks.push({ name: 'server metadata', detail: `registry ${String(metadata.body.registry_id ?? metadata.body.name ?? '?')}, signed` });

  const skill = `image.check${randomBytes(3).toString('hex')}`;
  const body = {
    display_name: `Image check agent ${skill}`,
    jurisdiction: 'GB',
    endpoints: [{ url: 'https://agents.example.org/image-check', protocol: 'mesh-a2a-jsonrpc', priority: 10, region: 'uk-south' }],
    capabilities: { protocols: ['mesh-a2a-jsonrpc'], skills: [skill], fhir_r4: false },
    trust: { certificates: [], signatures: [], attestations: [] },
    owner: { org_id: 'org-image-check', org_name: 'Image check', operator: 'ops@example.org' },
    description: 'Registered by npm run image:test.',
  };
  const created = await client.registerAgent(body, { idempotencyKey: randomUUID() });
  expect(created.ok && created.status === 201, 'a registration answers 201', created.text);
  const etag = created.headers.get('etag');
  expect(etag, 'the registration carries an ETag', Object.fromEntries(created.headers));
  const agentId = created.body.agent_id;
  const read = await client.getAgent(agentId);
  expect(read.ok && read.headers.get('etag') === etag, 'reading the agent back gives the same ETag', read.ok ? read.headers.get('etag') : read.text);
  const { jurisdiction: _fixed, ...writable } = body; // the jurisdiction is the registration's for good
  const replaced = await client.updateAgent(agentId, { ...writable, description: 'Replaced by npm run image:test.' }, { idempotencyKey: randomUUID(), ifMatch: etag });
  const newEtag = replaced.ok ? replaced.headers.get('etag') : null;
  expect(replaced.ok && newEtag && newEtag !== etag, 'a replacement with If-Match answers a new ETag', replaced.text);
  const stale = await client.updateAgent(agentId, writable, { idempotencyKey: randomUUID(), ifMatch: etag });
  expect(!stale.ok && stale.status === 412, 'a replacement with the stale ETag is refused with 412', stale.text);
  checks.push({ name: 'registration', detail: `201 ETag ${etag}; If-Match ${etag} → ${newEtag}; stale If-Match → 412 ${stale.envelope.error.code}` });

  const found = await client.discover({ capability: skill });
  expect(found.ok, 'discovery answers', found.text);
  expect(found.signature !== null, 'the discovery answer is signed and verifies', found.text);
  expect(found.body.results.some((result) => result.agent_id === agentId), 'discovery finds the registered agent', found.body);
  checks.push({ name: 'discovery', detail: `${found.body.result_count} result(s) for ${skill}, signature by ${found.signature.kid} verified` });
  return { checks, registered: { agentId, etag: newEtag } };
}

/** After a restart on the same data: ready, and the agent is there at the version it was left at. */
export async function stillRegistered(baseUrl: string, registered: Registered): Promise<Check> {
  const read = await createRegistryClient({ baseUrl }).getAgent(registered.agentId);
  expect(read.ok && read.headers.get('etag') === registered.etag, `the agent registered before the restart is there with ETag ${registered.etag}`, read.ok ? read.headers.get('etag') : read.text);
  return { name: 'after the restart', detail: `${registered.agentId} still there, ETag ${registered.etag}` };
}
