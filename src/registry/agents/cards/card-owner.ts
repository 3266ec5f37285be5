/**
 * The owner of an agent registered from its card when neither the caller nor the request names one
 * (a caller without an organisation: the development registry's anonymous caller). Registering from
 * a card proves control of the card's origin and nothing else (docs/mesh.md, "Signed cards"), so
 * the owner is that origin's host, with the card's `provider.organization` as its name when the card
 * gives one, rather than an empty `owner: {}`.
 */
import type { Owner } from '../../../contract/agent-record.ts';
import type { CallContext } from '../../../core/call-context.ts';
import { agentCardSignedContent } from '../../../core/crypto/agent-card-canonical.ts';

export function cardOwner(ctx: CallContext, requested: Owner | undefined, cardUrl: string, card: Record<string, unknown>): Owner | undefined {
  if (requested?.org_id !== undefined || ctx.principal.orgId !== undefined) return requested;
  const host = new URL(cardUrl).host.toLowerCase().replace(/^\[|\]/g, '');
  const provider = (agentCardSignedContent(card) as { provider?: { organization?: string } }).provider;
  const name = requested?.org_name ?? provider?.organization ?? host;
  return { ...requested, org_id: host, org_name: name };
}
