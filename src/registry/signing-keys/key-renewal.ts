/**
 * Keeps the registry's signing key inside its validity window (spec: a trust anchor's `not_after` is
 * a time). Every hour, and when the registry starts listening, it looks at the active key: within
 * `REGISTRY_KEY_RENEW_DAYS` of its `not_after` it rotates (the same rotation as
 * `POST /v1/trust/keys/rotate`: a `trust.key_rotated` event, the old key published one more day),
 * or, with renewal off (0: warnings from 30 days before) or failing, logs a warning each check.
 * `ward_signing_key_expires_in_seconds` carries the time left for alerts. On several instances the first to look rotates; the others find
 * the key already renewed.
 */
import { systemContext } from '../../core/call-context.ts';
import type { Clock } from '../../core/clock.ts';
import type { RegistrySigner, SigningAlg } from './registry-signer.ts';
import { writeOnce, type IdempotentOutcome, type WriteRequest } from '../storage/idempotency.ts';
import type { Storage } from '../storage/database.ts';
import { runWrite } from '../storage/write-unit.ts';
import { rotateRegistryKey, type RotatedKey } from './key-rotation.ts';

const DAY_MS = 86_400_000;
const CHECK_EVERY_MS = 3_600_000;
/** How long the renewed key's predecessor stays published (a manual rotation's default too). */
const RETIRE_AFTER_SECONDS = 86_400;
/** With renewal off, warnings start this long before `not_after`. */
const WARN_WITHOUT_RENEWAL_DAYS = 30;

export type KeyRenewalDeps = {
  readonly storage: Storage;
  readonly signer: RegistrySigner;
  readonly clock: Clock;
  readonly registryId: string;
  readonly lifetimeDays: number;
  /** 0: never rotate on its own, only warn. */
  readonly renewDays: number;
  readonly log: { info(fields: object, message: string): void; warn(fields: object, message: string): void };
  /** After a rotation committed here (the parent must learn the new key). */
  readonly onRotated?: (rotated: RotatedKey) => void;
};

export type KeyRenewal = {
  /** Looks once: rotates or warns when due. Answers the rotation it made, if any. */
  check(): Promise<RotatedKey | undefined>;
  /**
   * A rotation asked for (`POST /v1/trust/keys/rotate`) in its own write unit, at most once per
   * idempotency key: 201 with the new key. The signer is reloaded when it committed here (not for a
   * replay); telling the parent is the caller's.
   */
  rotateOnce(write: WriteRequest, options: { alg?: SigningAlg | undefined; retireAfterSeconds?: number | undefined }): Promise<IdempotentOutcome<RotatedKey>>;
  /** Seconds until the active key's `not_after` (negative once past). */
  expiresInSeconds(): number;
  start(): void;
  stop(): void;
};

export function createKeyRenewal(deps: KeyRenewalDeps): KeyRenewal {
  const { signer, clock } = deps;
  let timer: NodeJS.Timeout | undefined;

  const activeNotAfter = (): number => {
    const active = signer.publishedKeys().find((key) => key.kid === signer.kid);
    return active?.not_after ? Date.parse(active.not_after) : Number.POSITIVE_INFINITY;
  };
  const expiresInSeconds = () => Math.floor((activeNotAfter() - clock.now().getTime()) / 1000);

  async function check(): Promise<RotatedKey | undefined> {
    await signer.refreshIfStale();
    const left = activeNotAfter() - clock.now().getTime();
    if (left > (deps.renewDays === 0 ? WARN_WITHOUT_RENEWAL_DAYS : deps.renewDays) * DAY_MS) return undefined;
    const fields = { key_id: signer.kid, not_after: new Date(activeNotAfter()).toISOString(), days_left: Math.floor(left / DAY_MS) };
    if (deps.renewDays === 0) {
      deps.log.warn(fields, 'the signing key nears its not_after and REGISTRY_KEY_RENEW_DAYS=0: rotate it with POST /v1/trust/keys/rotate');
      return undefined;
    }
    const { result } = await runWrite(deps.storage, (unit) =>
      rotateRegistryKey(unit, systemContext(clock, 'key-renewal'), {
        registryId: deps.registryId,
        alg: signer.alg,
        retireAfterSeconds: RETIRE_AFTER_SECONDS,
        lifetimeDays: deps.lifetimeDays,
        sealer: signer.keySealer,
        expectedKid: signer.kid,
      }),
    );
    await signer.reload();
    if (result) {
      deps.log.info({ ...fields, new_key_id: result.key_id, new_not_after: result.not_after }, 'signing key renewed before its not_after');
      deps.onRotated?.(result);
    }
    return result;
  }

  async function rotateOnce(write: WriteRequest, options: { alg?: SigningAlg | undefined; retireAfterSeconds?: number | undefined }) {
    const outcome = await writeOnce(deps, write, async (unit) => ({
      status: 201,
      headers: {},
      body: await rotateRegistryKey(unit, write.ctx, {
        registryId: deps.registryId,
        alg: options.alg ?? signer.alg,
        retireAfterSeconds: options.retireAfterSeconds ?? RETIRE_AFTER_SECONDS,
        lifetimeDays: deps.lifetimeDays,
        sealer: signer.keySealer,
      }),
    }));
    if (!outcome.replayed) await signer.reload();
    return outcome;
  }

  const checkLogged = () =>
    check().catch((error: unknown) =>
      deps.log.warn({ err: error, key_id: signer.kid }, 'renewing the signing key failed; it will be tried again within the hour'),
    );

  return {
    check,
    rotateOnce,
    expiresInSeconds,
    start() {
      void checkLogged();
      timer = setInterval(() => void checkLogged(), CHECK_EVERY_MS);
      timer.unref();
    },
    stop() {
      clearInterval(timer);
    },
  };
}
