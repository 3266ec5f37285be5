import { loadMeshConfig } from '../../mesh/mesh-config.ts';
import { startAgent } from '../../mesh/agent-server.ts';
import type { WardCommand } from '../command.ts';
import { closeOnSignals, SHUTDOWN_GRACE_MS } from '../serving-command.ts';

const USAGE = `Usage: ward agent <alias>

Runs one mesh agent of the manifest (MESH_MANIFEST; shipped: triage, consent, clinician_avatar) on
AGENT_PORT (default its manifest port); usually the gateway starts agents itself (docs/mesh.md).

Example:
  npx ward agent triage`;

export const agentCommand: WardCommand = {
  name: 'agent',
  usage: USAGE,
  async run(args) {
    const [alias] = args;
    if (!alias) {
      console.error('ward agent: name the agent, e.g. ward agent triage');
      return 2;
    }
    const { app } = await startAgent(loadMeshConfig(), alias);
    // Started by a gateway that went away: stop with it rather than linger unsupervised.
    closeOnSignals([app], SHUTDOWN_GRACE_MS, ['disconnect']);
    return 'running';
  },
};
