import type { ErrorEnvelope } from '../core/errors.ts';
import type { ClientErrorEnvelope } from './client-errors.ts';
import type { AnswerSignature } from './signed-answer.ts';

/** An error envelope as a client call gives it: the registry's own, or one the client made (a client-side code). */
export type AnswerEnvelope = ErrorEnvelope | ClientErrorEnvelope;

/**
 * What the registry answered. `text` is the body as received (so signatures inside it stay
 * byte-exact); on failure `envelope` is the registry's error envelope, or one made by the client when
 * no usable answer came back (`status` is then the HTTP status seen, or null when none was, and
 * `text` the envelope's JSON). A client-made envelope has a registry code (`SERVICE_UNAVAILABLE`,
 * `DEPENDENCY_UNAVAILABLE`) or a client-side one (`SIGNATURE_INVALID`, docs/errors.md).
 */
export type RegistryAnswer<T = unknown> =
  | { ok: true; status: number; headers: Headers; text: string; body: T }
  | { ok: false; status: number | null; headers: Headers | null; text: string; envelope: AnswerEnvelope };

/**
 * A discovery or routing answer: when it is a success, `signature` says which registry key vouches
 * for it (null when the client was made with `verifySignatures: false` and checked nothing). An answer
 * whose signature does not hold is a failure, never a success.
 */
export type SignedAnswer<T = unknown> =
  | (Extract<RegistryAnswer<T>, { ok: true }> & { signature: AnswerSignature | null })
  | Extract<RegistryAnswer<T>, { ok: false }>;
