import { createRegistryClient } from 'ward/client';

const registry = createRegistryClient({
  baseUrl: process.env.REGISTRY_URL ?? 'http://127.0.0.1:8080',
  credential: process.env.REGISTRY_API_KEY, // none for the development registry of `npm start`
});

// The answer is signed by the registry; the client has checked it against the registry's published
// keys before handing it over (found.ok is false, with SIGNATURE_INVALID, when it does not verify).
const found = await registry.discover({ capability: 'triage.assess', jurisdiction: 'GB' });
if (!found.ok) throw new Error(`${found.envelope.error.code}: ${found.envelope.error.message}`);
const best = found.body.results[0];
if (!best) throw new Error('No agent offers triage.assess in GB.');
console.log(`${best.display_name} (${best.agent_id}), answer signed by key ${found.signature?.kid}`);

// Where to send the work, and what to fail over to: signed and checked the same way.
const advice = await registry.route({ target: best.agent_id, purpose: { purpose_of_use: 'treatment' } });
if (!advice.ok) throw new Error(`${advice.envelope.error.code}: ${advice.envelope.error.message}`);
const failover = advice.body.alternatives.map((endpoint) => endpoint.url);
console.log(`send to ${advice.body.selected.url}, then ${failover.join(', ') || 'nothing else'}`);
