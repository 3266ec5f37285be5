/**
 * Who may issue a trust mark in a federation (OIDF §3.1.1, §7.4): the trust anchor's entity
 * configuration names, per mark type, the entity identifiers whose marks of that type it recognises.
 * One rule for every Ward reader of marks (the registry's resolve answers, the trust bundle verifier),
 * so the two never judge the same mark differently.
 */
import type { EntityStatementClaims } from '../../contract/openid-federation.ts';

/** Why the anchor refuses `issuer`'s marks of `type`, or undefined when it recognises them. */
export function trustMarkIssuerRefusal(anchor: Pick<EntityStatementClaims, 'sub' | 'trust_mark_issuers'>, type: string, issuer: string): string | undefined {
  const table: unknown = anchor.trust_mark_issuers;
  // An anchor that publishes no table leaves issuers unrestricted (OIDF: the claim is optional).
  if (table === undefined) return undefined;
  // A table that is not one (signed by the anchor, but malformed) recognises nobody: fail closed.
  if (table === null || typeof table !== 'object' || Array.isArray(table)) return `the trust anchor ${anchor.sub} publishes a trust_mark_issuers that is not an object`;
  const issuers: unknown = (table as Record<string, unknown>)[type];
  if (!Array.isArray(issuers)) return `the trust anchor ${anchor.sub} does not list the type ${type} in its trust_mark_issuers`;
  // An empty list: any issuer (the anchor cannot name every registry that may issue it).
  if (issuers.length === 0 || issuers.includes(issuer)) return undefined;
  return `the trust anchor ${anchor.sub} lets only ${issuers.map(String).join(', ')} issue ${type}, not ${issuer}`;
}
