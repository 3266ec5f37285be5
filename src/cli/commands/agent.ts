import { loadMeshConfig } from '../../mesh/mesh-config.ts';
import { startAgent } from '../../mesh/agent-server.ts';
import type { WardCommand } from '../command.ts';

const USAGE = `Usage: ward agent <alias>

Runs one mesh agent of the manifest (MESH_MANIFEST; shipped: triage, consent, clinician_avatar) on
AGENT_PORT (default its manifest port); usually the gateway starts agents itself (docs/mesh.md).

Example:
  node src/cli/ward.ts agent triage`;

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
    let closing = false;
    const close = () => {
      if (closing) return;
      closing = true;
      app.close().then(() => process.exit(0));
    };
    process.once('SIGINT', close);
    process.once('SIGTERM', close);
    // Started by a gateway that went away: stop with it rather than linger unsupervised.
    process.once('disconnect', close);
    return 'running';
  },
};
