/**
 * What a registry below the root last learnt from its superior through OpenID Federation: the kids the
 * superior names for it, the superior's keys and status endpoint, the pinned trust anchor and the last
 * verified mark of each type. Stored with the federation state so every instance signs with a key the
 * superior names. Why each part is kept: docs/federation.md, "What a child keeps of its superior".
 */
import { decodeProtectedHeader } from 'jose';
import type { Clock } from '../../../core/clock.ts';
import type { PublishedJwk } from '../../../core/crypto/key-set.ts';
import type { Storage } from '../../storage/database.ts';
import { readFederationState, writeFederationState } from '../storage/federation-state-store.ts';
import type { RegistrySigner } from '../../signing-keys/index.ts';
import type { TrustAnchorPin } from './trust-anchor-pin.ts';

/** The name the view is stored under (federation state; the parent link's grant is `delegation`). */
export const SUPERIOR_STATE_NAME = 'superior';
/** How often another instance's learning is looked for while the view is used. */
const REREAD_MS = 5_000;

export type SuperiorKeys = { entityId: string; keys: PublishedJwk[]; statusEndpoint: string | undefined };

/** What was learnt, as stored. */
export type SuperiorLearning = {
  /** The kids the superior's last verified statement about this registry names; undefined until one was read. */
  namedKids: readonly string[] | undefined;
  /** The superior's entity identifier, keys and status endpoint from the last chain that validated. */
  superior: SuperiorKeys | undefined;
  /** The last trust mark the superior issued about this registry, by type (registry marks only), verified. */
  marks: Readonly<Record<string, string>>;
  /** The top of the chain, pinned when the first chain validated and followed by continuity (./trust-anchor-pin.ts). */
  anchor: TrustAnchorPin | undefined;
};

type Stored = SuperiorLearning & { parent_url: string; learnt_at: string };

export type SuperiorView = {
  readonly namedKids: readonly string[] | undefined;
  readonly superior: SuperiorKeys | undefined;
  readonly marks: ReadonlyMap<string, string>;
  readonly anchor: TrustAnchorPin | undefined;
  /** The kids a statement read in this round names (before its chain validated): used to sign, not stored. */
  noteNamedKids(kids: readonly string[]): void;
  /** Records what a validated chain (or a verified mark) taught, for every instance and a restart. */
  learn(update: Partial<SuperiorLearning>): Promise<void>;
};

type ViewDeps = { storage: Pick<Storage, 'db'> | undefined; parentUrl: string | undefined; clock: Clock; log: (message: string, error?: unknown) => void };

/** The view, read from storage now and kept current from it. */
export async function createSuperiorView(deps: ViewDeps): Promise<SuperiorView> {
  let held: SuperiorLearning = { namedKids: undefined, superior: undefined, marks: {}, anchor: undefined };
  let learntAt = '';
  let readAt = Date.now();
  let marks = new Map<string, string>();

  const read = async () => {
    if (!deps.storage || !deps.parentUrl) return;
    const stored = await readFederationState<Stored>(deps.storage.db, SUPERIOR_STATE_NAME);
    // After a change of parent what was learnt is about another superior; and only what is newer counts.
    if (!stored || stored.parent_url !== deps.parentUrl || stored.learnt_at <= learntAt) return;
    held = { namedKids: stored.namedKids ?? undefined, superior: stored.superior ?? undefined, marks: stored.marks ?? {}, anchor: stored.anchor ?? undefined };
    marks = new Map(Object.entries(held.marks));
    learntAt = stored.learnt_at;
  };
  const keepCurrent = () => {
    if (Date.now() - readAt <= REREAD_MS) return;
    readAt = Date.now();
    read().catch((error: unknown) => deps.log('reading what was learnt from the superior failed', error));
  };
  await read().catch((error: unknown) => deps.log('reading what was learnt from the superior failed', error));

  return {
    get namedKids() {
      keepCurrent();
      return held.namedKids;
    },
    get superior() {
      keepCurrent();
      return held.superior;
    },
    get marks() {
      keepCurrent();
      return marks;
    },
    get anchor() {
      keepCurrent();
      return held.anchor;
    },
    noteNamedKids(kids) {
      held = { ...held, namedKids: [...kids] };
    },
    async learn(update) {
      held = { ...held, ...update, marks: { ...held.marks, ...update.marks } };
      marks = new Map(Object.entries(held.marks));
      learntAt = deps.clock.now().toISOString();
      if (!deps.storage || !deps.parentUrl) return;
      const stored: Stored = { ...held, parent_url: deps.parentUrl, learnt_at: learntAt };
      await writeFederationState(deps.storage.db, SUPERIOR_STATE_NAME, stored, learntAt);
    },
  };
}

/** A key signing the configuration should outlive it by this much at least. */
const KEY_MARGIN_MS = 60_000;

/**
 * The kid to sign the entity configuration with: the current key once the superior names it (or while
 * nothing is known of what it names), else a key the superior names that this registry still publishes
 * inside its window; the current key when there is none (an emergency rotation retired the old key).
 */
export function configurationKid(signer: Pick<RegistrySigner, 'kid' | 'publishedKeys'>, named: readonly string[] | undefined, now: Date): string {
  if (named === undefined || named.includes(signer.kid)) return signer.kid;
  const nowMs = now.getTime();
  const usable = signer
    .publishedKeys()
    .find((key) => named.includes(key.kid) && Date.parse(key.not_before) <= nowMs && (key.not_after === null || Date.parse(key.not_after) > nowMs + KEY_MARGIN_MS));
  return usable?.kid ?? signer.kid;
}

/** `claims` signed by `kid` (one of this registry's keys), or by the current key when that is the one. */
export async function signWithKid(signer: Pick<RegistrySigner, 'kid' | 'sign' | 'signWithKeys'>, claims: unknown, typ: string, kid: string): Promise<string> {
  if (kid === signer.kid) return signer.sign(claims, typ);
  const signed = await signer.signWithKeys(claims, typ, [kid]);
  return signed.find((jws) => decodeProtectedHeader(jws).kid === kid) ?? (signed[0] as string);
}
