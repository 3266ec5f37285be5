// What the HTTP benches share: one autocannon run reduced to the figures we report, the median of
// interleaved rounds, and the dropping of a bench's PostgreSQL schema.
import autocannon from 'autocannon';

export type Figures = { rps: number; p50: number; p99: number; errors: number; non2xx: number };

export type LoadOptions = {
  connections: number;
  durationS: number;
  /** One request, or a function giving each request (varied paths, bodies, headers). */
  request?: { method?: 'GET' | 'POST'; path?: string; body?: string; headers?: Record<string, string> };
  next?: () => { method?: 'GET' | 'POST'; path?: string; body?: string; headers?: Record<string, string> };
};

export async function load(url: string, options: LoadOptions): Promise<Figures> {
  const next = options.next;
  const result = await autocannon({
    url: options.request?.path ? url + options.request.path : url,
    connections: options.connections,
    duration: options.durationS,
    ...(options.request
      ? {
          method: options.request.method ?? 'GET',
          ...(options.request.body ? { body: options.request.body } : {}),
          headers: { ...(options.request.body ? { 'content-type': 'application/json' } : {}), ...options.request.headers },
        }
      : {}),
    ...(next
      ? {
          requests: [
            {
              setupRequest: (request) => {
                const one = next();
                return {
                  ...request,
                  method: one.method ?? 'GET',
                  ...(one.path ? { path: one.path } : {}),
                  ...(one.body ? { body: one.body } : {}),
                  headers: { ...(one.body ? { 'content-type': 'application/json' } : {}), ...one.headers },
                };
              },
            },
          ],
        }
      : {}),
  });
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, errors: result.errors, non2xx: result.non2xx };
}

export const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

/** The median of each figure over the rounds; errors are summed. */
export function combine(rounds: Figures[]): Figures {
  return {
    rps: median(rounds.map((r) => r.rps)),
    p50: median(rounds.map((r) => r.p50)),
    p99: median(rounds.map((r) => r.p99)),
    errors: rounds.reduce((sum, r) => sum + r.errors, 0),
    non2xx: rounds.reduce((sum, r) => sum + r.non2xx, 0),
  };
}

/**
 * Runs Ward and its baseline in alternating order, `rounds` times, so drift on a shared machine falls
 * on both alike. The ratio is the median of the per-round ratios.
 */
export async function interleaved(rounds: number, ward: () => Promise<Figures>, bare: () => Promise<Figures>) {
  const w: Figures[] = [];
  const b: Figures[] = [];
  const ratios: number[] = [];
  for (let round = 0; round < rounds; round += 1) {
    if (round % 2 === 0) {
      w.push(await ward());
      b.push(await bare());
    } else {
      b.push(await bare());
      w.push(await ward());
    }
    ratios.push((w.at(-1) as Figures).rps / (b.at(-1) as Figures).rps);
  }
  return { ward: combine(w), bare: combine(b), ratio: median(ratios) };
}

export async function dropSchema(databaseUrl: string, schema: string): Promise<void> {
  const pg = (await import('pg')).default;
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}
