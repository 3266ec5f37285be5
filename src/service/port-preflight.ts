import { createServer } from 'node:net';

/** A port a command is about to listen on, and the variable that moves it. */
export type PlannedPort = { variable: string; host: string; port: number };

/** Thrown before anything starts when planned ports are taken; the message names every one. */
export class PortsInUseError extends Error {
  readonly code = 'WARD_PORTS_IN_USE';
  readonly busy: readonly PlannedPort[];
  constructor(busy: readonly PlannedPort[]) {
    const [only] = busy;
    const variables = busy.map(({ variable }) => variable);
    super(
      busy.length === 1 && only
        ? `port ${only.port} on ${only.host} is already in use (another Ward, or another program): set ${only.variable} to a free port`
        : `ports already in use (another Ward, or another program): ${busy.map(({ variable, host, port }) => `${port} on ${host} (${variable})`).join(', ')}; ` +
            `set ${variables.slice(0, -1).join(', ')} and ${variables.at(-1)} to free ports`,
    );
    this.name = 'PortsInUseError';
    this.busy = busy;
  }
}

/** Whether something already listens on host:port (tried by listening and closing at once). */
function isBusy(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'EADDRINUSE' || error.code === 'EACCES'));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(false)));
  });
}

/**
 * Checks every fixed port of a start-up before any server starts, so all conflicts are named in one
 * message rather than one per restart. Port 0 (any free port) is never busy. A port taken between
 * this check and the listen still fails there, with its own message.
 */
export async function checkPortsFree(planned: readonly PlannedPort[]): Promise<void> {
  const fixed = planned.filter(({ port }) => port !== 0);
  const busy = (await Promise.all(fixed.map(async (entry) => ((await isBusy(entry.host, entry.port)) ? [entry] : [])))).flat();
  if (busy.length > 0) throw new PortsInUseError(busy);
}
