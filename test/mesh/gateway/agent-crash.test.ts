/**
 * Crash cycles of a gateway's agent under load (issue 19, item 4): consent grants flow through the
 * gateway to the real consent agent (a child process, consents in SQLite with synchronous=FULL); the
 * agent is SIGKILLed mid-burst, the gateway restarts it, and every grant the caller saw acknowledged
 * is in force afterwards. CRASH_CYCLES (default 2 in CI, 50 with `npm run crash`).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { authHeaders, eventually, post } from '../helpers.ts';
import { agentHealth, startTestGateway } from './gateway-helpers.ts';

const CYCLES = Math.max(1, Math.min(Number(process.env.CRASH_CYCLES ?? 2), 50));
const CONSENT_ENTRY = fileURLToPath(new URL('../../../src/mesh/agents/consent/index.ts', import.meta.url));
const WORKERS = 6;
const KILL_AFTER_ACKS = 20;

describe('gateway agents killed under load', () => {
  test(`${CYCLES} SIGKILL cycles of the consent agent mid-burst lose no acknowledged grant`, { timeout: 120_000 + CYCLES * 20_000 }, async (t) => {
    const gateway = await startTestGateway(t, { consent: { entry: CONSENT_ENTRY } }, { env: { GATEWAY_RESTART_BACKOFF_MS: '50', GATEWAY_RESTART_BACKOFF_MAX_MS: '200' } });
    const url = `${gateway.url}/rpc/consent`;
    const headers = await authHeaders();
    const acknowledged: string[] = [];
    let refused = 0;

    for (let cycle = 0; cycle < CYCLES; cycle += 1) {
      // The agent runs (first call starts it; after a kill, the gateway restarts it).
      await eventually(async () => ((await post(url, { jsonrpc: '2.0', id: 0, method: 'consent/check', params: { requester: 'did:web:x', patient_ref: 'Patient/0', purpose: 'treatment' } }, headers)).body.result ? true : undefined), 'the consent agent');
      const { pid } = await agentHealth(gateway, 'consent');
      let killed = false;
      let ackedThisCycle = 0;
      const worker = async (index: number) => {
        for (let n = 0; !killed; n += 1) {
          const ref = `Patient/c${cycle}-w${index}-n${n}`;
          const answer = await post(url, { jsonrpc: '2.0', id: n, method: 'consent/grant', params: { requester: 'did:web:localhost:agents:triage', patient_ref: ref, purpose: 'treatment' } }, headers).catch(() => undefined);
          if (answer?.body?.result) {
            acknowledged.push(ref);
            ackedThisCycle += 1;
            if (ackedThisCycle === KILL_AFTER_ACKS && !killed) {
              killed = true;
              process.kill(pid, 'SIGKILL');
            }
          } else {
            // -32011 while the agent is down or restarting: refused, never acknowledged.
            refused += 1;
            if (killed) return;
          }
        }
      };
      await Promise.all(Array.from({ length: WORKERS }, (_, index) => worker(index)));
      t.diagnostic(`cycle ${cycle}: ${ackedThisCycle} grants acknowledged before and around the kill of pid ${pid}`);
    }

    await eventually(async () => ((await agentHealth(gateway, 'consent')).state === 'running' ? true : undefined), 'the last restart');
    const missing: string[] = [];
    for (const ref of acknowledged) {
      const check = await post(url, { jsonrpc: '2.0', id: 1, method: 'consent/check', params: { requester: 'did:web:localhost:agents:triage', patient_ref: ref, purpose: 'treatment' } }, headers);
      if (check.body.result?.granted !== true) missing.push(ref);
    }
    assert.deepEqual(missing, [], `${missing.length} of ${acknowledged.length} acknowledged grants lost`);
    const health = await agentHealth(gateway, 'consent');
    assert.ok(health.restarts >= CYCLES, `restarted ${health.restarts} times`);
    t.diagnostic(`${acknowledged.length} grants acknowledged over ${CYCLES} kills, all in force; ${refused} calls refused while the agent was down`);
  });
});
