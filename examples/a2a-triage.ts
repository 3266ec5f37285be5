/**
 * The standard flow with the official A2A client (`@a2a-js/sdk`, A2A 1.0): find an agent through the
 * registry (its answer signature checked by `ward/client`), take the registry's routing advice, and
 * send the advised endpoint — the mesh gateway, which starts the agent on first use — a triage task,
 * then read its result. With `npm start` running:
 *
 *   MESH_TOKEN=$(npx ward token --sub did:web:localhost:agents:example) npx node examples/a2a-triage.ts
 *
 * The mesh wants two headers on each call, a mesh token and the caller's DID (docs/mesh.md,
 * "Authentication"); everything else is the SDK's defaults: the card is read from the advised URL
 * (`<url>/.well-known/agent-card.json`) and the transport chosen from it.
 */
import { randomUUID } from 'node:crypto';
import { Role, TaskState } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, createAuthenticatingFetchWithRetry } from '@a2a-js/sdk/client';
import { createRegistryClient } from 'ward/client';

const token = process.env.MESH_TOKEN;
if (!token) throw new Error('Set MESH_TOKEN: MESH_TOKEN=$(npx ward token --sub did:web:localhost:agents:example)');
// The DID the token was issued to (its `sub`): the gateway checks that the two agree.
const caller = process.env.MESH_CALLER ?? (JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as { sub: string }).sub;

// 1. Discover: who offers triage.assess in GB (a signed answer, verified before it is handed over).
const registry = createRegistryClient({ baseUrl: process.env.REGISTRY_URL ?? 'http://127.0.0.1:8080', credential: process.env.REGISTRY_API_KEY });
const found = await registry.discover({ capability: 'triage.assess', jurisdiction: 'GB' });
if (!found.ok) throw new Error(`${found.envelope.error.code}: ${found.envelope.error.message}`);
const best = found.body.results[0];
if (!best) throw new Error('No agent offers triage.assess in GB.');
console.log(`discovered: ${best.display_name} (${best.agent_id})`);

// 2. Route: where to send it (signed and checked the same way).
const advice = await registry.route({ target: best.agent_id, purpose: { purpose_of_use: 'treatment' } });
if (!advice.ok) throw new Error(`${advice.envelope.error.code}: ${advice.envelope.error.message}`);
console.log(`advised endpoint: ${advice.body.selected.url}`);

// 3. The official A2A client at the advised URL, with the mesh's two headers added to each call.
const fetchImpl = createAuthenticatingFetchWithRetry(fetch, {
  headers: async () => ({ authorization: `Bearer ${token}`, 'x-agent-id': caller }),
  shouldRetryWithHeaders: async () => undefined,
});
const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory({ fetchImpl })] }));
const client = await factory.createFromUrl(advice.body.selected.url);

// 4. One message, two parts: the complaint as text and the vital signs as data. A 1.0 part is
//    `{content: {$case: 'text' | 'data', value}}`; the send blocks until the task's turn ends.
const part = (content: { $case: 'text'; value: string } | { $case: 'data'; value: Record<string, unknown> }) => ({ content, metadata: undefined, filename: '', mediaType: '' });
const task = (await client.sendMessage({
  message: {
    messageId: randomUUID(),
    role: Role.ROLE_USER,
    parts: [
      part({ $case: 'text', value: 'chest pain' }),
      part({ $case: 'data', value: { vital_signs: { heart_rate: 118, respiratory_rate: 22, oxygen_saturation: 94, systolic_bp: 105, consciousness: 'alert', temperature_c: 37.2 } } }),
    ],
    taskId: '',
    contextId: '',
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  },
} as never)) as unknown as { id: string; status: { state: TaskState }; artifacts?: Array<{ name?: string; parts: Array<{ content?: { $case: string; value: unknown } }> }> };

console.log(`task ${task.id}: ${TaskState[task.status.state]}`);
if (task.status.state !== TaskState.TASK_STATE_COMPLETED) throw new Error('The triage task did not complete.');
const assessment = task.artifacts?.[0]?.parts[0]?.content?.value as { urgency?: string; news2?: { total?: number } } | undefined;
console.log(`urgency: ${assessment?.urgency}, NEWS2 ${assessment?.news2?.total}`);
