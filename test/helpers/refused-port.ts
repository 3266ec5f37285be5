import { readFile } from 'node:fs/promises';
import { connect } from 'node:net';

/**
 * A loopback port that refuses connections (ECONNREFUSED) for the whole test. A port bound and
 * released (`freePort`) can be taken by a server of another test file, running in parallel, and a
 * test that expected "nothing answered" then gets that server's 404. The kernel hands out listening
 * ports for port 0, and the source ports of outgoing connections, only from
 * `ip_local_port_range`; this suite never binds a fixed port. So a port below that range, checked
 * to refuse now, stays refused.
 */
export async function refusedPort(): Promise<number> {
  const lowest = await ephemeralRangeStart();
  const floor = 20_000;
  const span = lowest - floor;
  if (span < 1000) throw new Error(`ip_local_port_range starts at ${lowest}: no room below it for a refused port`);
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = floor + Math.floor(Math.random() * span);
    if (await refuses(port)) return port;
  }
  throw new Error('no refused port found below the ephemeral range after 50 tries');
}

async function ephemeralRangeStart(): Promise<number> {
  try {
    const [start] = (await readFile('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')).trim().split(/\s+/);
    return Number(start);
  } catch {
    return 32_768; // Linux's default, for a machine without /proc
  }
}

function refuses(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => { socket.destroy(); resolve(false); });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}
