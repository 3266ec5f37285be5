/**
 * The agent the official A2A TCK tests (`ward agent tck`, `npm run tck`): Ward's runtime as every
 * agent has it, plus the TCK's system-under-test rules (a2a-tck docs/SUT_REQUIREMENTS.md), which are
 * about message ids and nothing else. Every task answers its first message and stays open (`working`:
 * the runtime keeps it for the caller's next message or a cancel), as the SDKs' TCK agents do; a
 * message whose id starts with `test-resubscribe-message-id` keeps its turn running for
 * 2 × TCK_STREAMING_TIMEOUT seconds, so the TCK can subscribe to it again, and then completes.
 */
import type { AgentFactory } from '../../runtime/mesh-agent.ts';
import { describeFilePart } from '../../runtime/tasks/file-parts.ts';
import type { MeshMessage } from '../../runtime/tasks/task-types.ts';

/** The TCK's message-id prefix for a task that must keep running (SUT_REQUIREMENTS.md). */
export const RESUBSCRIBE_PREFIX = 'test-resubscribe-message-id';

/** The TCK's default `TCK_STREAMING_TIMEOUT`, seconds. */
const DEFAULT_STREAMING_TIMEOUT_S = 2;

/** How long a resubscribe task keeps its turn running: twice the TCK's streaming timeout. */
export function resubscribeHoldMs(env: NodeJS.ProcessEnv = process.env): number {
  const seconds = Number(env.TCK_STREAMING_TIMEOUT);
  return 2 * (Number.isFinite(seconds) && seconds > 0 ? seconds : DEFAULT_STREAMING_TIMEOUT_S) * 1000;
}

function textOf(message: MeshMessage): string {
  return message.parts
    .map((part) => (part.kind === 'text' ? part.text : part.kind === 'data' ? JSON.stringify(part.data) : describeFilePart(part)))
    .join(' ');
}

/**
 * What the TCK sends besides text and JSON (its multi-modal tests send `application/octet-stream`
 * raw parts); the runtime refuses any other media type with ContentTypeNotSupportedError.
 */
export const TCK_INPUT_MODES = ['text/plain', 'application/json', 'application/octet-stream', 'application/pdf', 'image/*', 'audio/*'] as const;

/** Resolves after `ms`, or when `signal` aborts (a cancel), whichever is first. */
function hold(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    }, { once: true });
  });
}

export const createAgent: AgentFactory = ({ alias }) => ({
  info: {
    alias,
    name: 'Ward TCK agent',
    description: 'Answers every message and keeps its task open, as the A2A Technology Compatibility Kit expects of the agent it checks.',
    version: '1.0.0',
    inputModes: TCK_INPUT_MODES,
    skills: [{ id: 'tck.echo', name: 'Echo', description: 'Answers with the text it was sent.', tags: ['tck', 'echo'], examples: ['Hello from the TCK'] }],
  },
  executeTask: async ({ message, signal, progress }) => {
    if (message.messageId.startsWith(RESUBSCRIBE_PREFIX)) {
      progress('Working on it.');
      await hold(resubscribeHoldMs(), signal);
      return { state: 'completed', message: `Done: ${textOf(message)}`, artifacts: [{ name: 'response', parts: [{ kind: 'text', text: textOf(message) }] }] };
    }
    return { state: 'working', message: `Received: ${textOf(message)}` };
  },
});
