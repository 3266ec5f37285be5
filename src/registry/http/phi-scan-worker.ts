/**
 * The PHI scan of a large body, off the event loop (./phi-scan-pool.ts): the same scanForPhi, in a
 * worker thread, so one caller's large body never holds up another's request (issue 41, finding 4).
 */
import { parentPort } from 'node:worker_threads';
import { scanForPhi } from '../../core/phi/index.ts';

parentPort?.on('message', (job: { id: number; value: unknown }) => {
  try {
    parentPort?.postMessage({ id: job.id, findings: scanForPhi(job.value) });
  } catch (error) {
    parentPort?.postMessage({ id: job.id, error: (error as Error | null)?.message ?? String(error) });
  }
});
