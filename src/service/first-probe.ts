import type { RegistryServices } from '../registry/plugins/registry-services.ts';
import { SHIPPED_AGENTS } from '../mesh/registration.ts';

/**
 * The shipped agents' first health reading, right after `ward start` registered them, rather than
 * one probe interval later: each agent's card is read through the gateway first (which starts an
 * agent that never ran, once: the gateway then remembers its card, and the agent stops after its idle
 * timeout as usual), then one probe round runs. Without the first step the round would wait for the
 * starts and could time out, reading a healthy agent as unhealthy. Failures are the prober's to
 * report (a start that fails makes the gateway's per-agent health answer 503); nothing here throws.
 */
export async function firstProbe(ward: RegistryServices, gatewayUrl: string, timeoutMs: number): Promise<void> {
  await Promise.all(
    SHIPPED_AGENTS.map((info) =>
      fetch(`${gatewayUrl}/rpc/${info.alias}/.well-known/agent-card.json`, { signal: AbortSignal.timeout(timeoutMs) }).then(
        (response) => response.body?.cancel(),
        () => undefined,
      ),
    ),
  );
  // A round already under way may have listed the agents before they were registered: run one after it.
  await ward.healthProber.runOnce().catch(() => 0);
  await ward.healthProber.runOnce().catch(() => 0);
}
