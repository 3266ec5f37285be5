import { fileURLToPath } from 'node:url';
import { loadMeshConfig } from '../../mesh/mesh-config.ts';
import { startAgent } from '../../mesh/agent-server.ts';
import type { WardCommand } from '../command.ts';
import { closeOnSignals, SHUTDOWN_GRACE_MS } from '../serving-command.ts';

const USAGE = `Usage: ward agent <alias>

Runs one mesh agent of the manifest (MESH_MANIFEST; shipped: triage, consent, clinician_avatar) on
AGENT_PORT (default its manifest port); usually the gateway starts agents itself (docs/mesh.md).
\`ward agent tck\` runs the agent the A2A TCK tests (docs/conformance.md), from its own manifest.

Example:
  npx ward agent triage`;

/** The TCK agent's own manifest: it is not a shipped agent (the gateway and the registry do not list it). */
const TCK_MANIFEST = fileURLToPath(new URL('../../mesh/agents/tck/manifest.json', import.meta.url));

export const agentCommand: WardCommand = {
  name: 'agent',
  usage: USAGE,
  async run(args) {
    const [alias] = args;
    if (!alias) {
      console.error('ward agent: name the agent, e.g. ward agent triage');
      return 2;
    }
    const env = alias === 'tck' && !process.env.MESH_MANIFEST ? { ...process.env, MESH_MANIFEST: TCK_MANIFEST } : process.env;
    const { app } = await startAgent(loadMeshConfig(env), alias);
    // Started by a gateway that went away: stop with it rather than linger unsupervised.
    closeOnSignals([app], SHUTDOWN_GRACE_MS, ['disconnect']);
    return 'running';
  },
};
