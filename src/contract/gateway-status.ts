/**
 * What the mesh gateway's status reads answer (docs/mesh.md): one agent as `GET /health` lists it,
 * and one forwarded exchange as `GET /tasks` lists it. The gateway writes them and the console reads
 * them, so they are wire contract, like the registry's: neither side imports the other.
 */

/** One agent as `/health` lists it (its port hidden in production). */
export type GatewayAgentStatus = {
  alias: string;
  /** stopped, starting, running, stopping, backoff or failed. */
  state: string;
  pid: number | null;
  /** The most recent child's pid, also after it exited. */
  last_pid: number | null;
  port: number | null;
  starts: number;
  restarts: number;
  consecutive_failures: number;
  last_start_at: string | null;
  running_since: string | null;
  last_exit: { code: number | null; signal: string | null; at: string } | null;
  last_error: string | null;
  last_used_at: string | null;
  /** The agent's web page through the gateway (`<gateway>/rpc/<alias>/avatar`), when it has one. */
  page_url?: string | null;
};

/** One exchange the gateway forwarded to an agent, as `/tasks` lists it: never content, never ids. */
export type GatewayTaskStatus = {
  alias: string;
  method: string;
  /** `in_flight` until it ends; then the last task state the answer reported, else its outcome. */
  state: string;
  streamed: boolean;
  started_at: string;
  ended_at: string | null;
  /** So far, while in flight. */
  duration_ms: number;
};
