/**
 * The mesh bench's echo agent: every task completes on its first turn with one artifact echoing the
 * text it was sent, the same work as the `@a2a-js/sdk` echo executor in bench/a2a-echo-server.ts.
 * It runs on Ward's agent runtime as shipped (a child of the gateway: durable SQLite task store,
 * authentication of every request), so a bench row with it measures the runtime and nothing else.
 *
 * Only bench/mesh-manifest.json names it: it is not a shipped agent (the registry would list it), and
 * docs/mesh.md "Writing an agent" already shows the smallest agent to copy.
 */
import type { AgentFactory } from '../src/mesh/runtime/mesh-agent.ts';
import type { MeshMessage } from '../src/mesh/runtime/tasks/task-types.ts';

/** The message's text parts, joined; what the agent echoes. */
export function echoedText(message: MeshMessage): string {
  return message.parts.map((part) => (part.kind === 'text' ? part.text : '')).join('');
}

export const createAgent: AgentFactory = ({ alias }) => ({
  info: {
    alias,
    name: 'Ward bench echo agent',
    description: 'Completes every task at once with an artifact echoing its text (benchmarks only).',
    version: '1.0.0',
    skills: [{ id: 'bench.echo', name: 'Echo', description: 'Echoes the text it is sent.', tags: ['bench'] }],
  },
  executeTask: async ({ message }) => ({
    state: 'completed',
    artifacts: [{ name: 'echo', parts: [{ kind: 'text', text: echoedText(message) }] }],
  }),
});
