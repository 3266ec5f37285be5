/**
 * What the gateway remembers of the JSON-RPC exchanges it forwarded: for each, the agent, the method,
 * when it began, how long it took and the task state the agent's answer reported — never a message,
 * an id or a header. Kept in memory (the last {@link RECENT_KEPT} that ended, and those in flight): a
 * restart forgets them, and each gateway counts its own. Served by `GET /tasks` (task-route.ts) for
 * the console's mesh page. No Fastify here.
 */
import type { GatewayTaskStatus } from '../../contract/gateway-status.ts';
import type { Clock } from '../../core/clock.ts';

/** Exchanges that ended, newest kept. */
export const RECENT_KEPT = 50;

/**
 * The task states an answer may report (contract §10: A2A's `status.state`, Ward's `tasks/send`
 * `status`), the only words read out of an answer.
 */
const TASK_STATE = /"(?:state|status)"\s*:\s*"(submitted|working|input-required|auth-required|completed|failed|canceled|rejected)"/g;
/** Enough of a chunk's end to find a state word cut in two by the next chunk. */
const CARRY_CHARS = 48;

/**
 * How an exchange ended when the answer named no task state: `answered` (a message or another
 * method's result), `error` (a JSON-RPC error), `unreachable` (the agent did not answer, or could not
 * start), `abandoned` (the caller left first).
 */
export type ExchangeOutcome = 'answered' | 'error' | 'unreachable' | 'abandoned';

export type ExchangeView = GatewayTaskStatus;

export type TaskLogSnapshot = {
  in_flight: ExchangeView[];
  recent: ExchangeView[];
  kept: number;
};

/** One exchange as it happens: fed the answer's bytes, then ended once. */
export type ExchangeRecorder = {
  observe(chunk: Buffer): void;
  streamed(): void;
  end(outcome: ExchangeOutcome): void;
};

type Exchange = {
  alias: string;
  method: string;
  startedAt: number;
  endedAt: number | null;
  taskState: string | null;
  outcome: ExchangeOutcome | null;
  streamed: boolean;
  errorSeen: boolean;
  carry: string;
};

export type TaskLog = {
  begin(alias: string, method: string): ExchangeRecorder;
  snapshot(): TaskLogSnapshot;
};

/**
 * The method of a JSON-RPC body as a short, safe word (`batch` for a batch, `?` when none is found),
 * read from its first bytes without parsing the whole body (the gateway forwards bytes as they are).
 */
export function methodOf(body: Buffer): string {
  const head = body.subarray(0, 1024).toString('utf8');
  if (head.trimStart().startsWith('[')) return 'batch';
  return /"method"\s*:\s*"([\w./-]{1,64})"/.exec(head)?.[1] ?? '?';
}

export function createTaskLog(clock: Clock): TaskLog {
  const inFlight = new Set<Exchange>();
  const recent: Exchange[] = [];
  const now = () => clock.now().getTime();
  return {
    begin(alias, method) {
      const exchange: Exchange = { alias, method, startedAt: now(), endedAt: null, taskState: null, outcome: null, streamed: false, errorSeen: false, carry: '' };
      inFlight.add(exchange);
      return {
        observe: (chunk) => observeAnswer(exchange, chunk),
        streamed: () => {
          exchange.streamed = true;
        },
        end: (outcome) => {
          if (!inFlight.delete(exchange)) return;
          exchange.endedAt = now();
          exchange.outcome = outcome === 'answered' && exchange.errorSeen ? 'error' : outcome;
          exchange.carry = '';
          recent.unshift(exchange);
          recent.length = Math.min(recent.length, RECENT_KEPT);
        },
      };
    },
    snapshot() {
      const at = now();
      return { in_flight: [...inFlight].reverse().map((exchange) => viewOf(exchange, at)), recent: recent.map((exchange) => viewOf(exchange, at)), kept: RECENT_KEPT };
    },
  };
}

/** Reads the last task state out of the answer's bytes (a chunk may split one: its end is carried). */
function observeAnswer(exchange: Exchange, chunk: Buffer): void {
  const text = exchange.carry + chunk.toString('utf8');
  for (const match of text.matchAll(TASK_STATE)) exchange.taskState = match[1] ?? exchange.taskState;
  if (!exchange.errorSeen && exchange.taskState === null && /"error"\s*:\s*\{/.test(text)) exchange.errorSeen = true;
  exchange.carry = text.slice(-CARRY_CHARS);
}

function viewOf(exchange: Exchange, at: number): ExchangeView {
  const ended = exchange.endedAt;
  const answered = exchange.outcome === 'answered' || exchange.outcome === null;
  return {
    alias: exchange.alias,
    method: exchange.method,
    state: ended === null ? 'in_flight' : ((answered ? exchange.taskState : null) ?? exchange.outcome ?? 'answered'),
    streamed: exchange.streamed,
    started_at: new Date(exchange.startedAt).toISOString(),
    ended_at: ended === null ? null : new Date(ended).toISOString(),
    duration_ms: (ended ?? at) - exchange.startedAt,
  };
}
