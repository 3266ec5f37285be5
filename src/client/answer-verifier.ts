/**
 * The registry client's check of each discovery and routing answer before it hands it over: the
 * signature against the registry's keys ({@link verifySignedAnswer}, reading the keys once more for a
 * `kid` they do not name), then that the answer is for this request and current
 * ({@link answerFitsRequest}). An answer that does not hold becomes a failure with a
 * `SIGNATURE_INVALID` envelope; one that cannot be checked because the keys could not be read, a
 * failure with `DEPENDENCY_UNAVAILABLE`. Neither throws.
 */
import { errorEnvelope } from '../core/errors.ts';
import { clientErrorEnvelope } from './client-errors.ts';
import type { RegistryAnswer, SignedAnswer } from './registry-answer.ts';
import type { KeysUnavailable, RegistryKeys } from './registry-keys.ts';
import { answerFitsRequest, verifySignedAnswer, type AnswerKind, type AskedFor, type SignatureProblem } from './signed-answer.ts';

export type AnswerVerifier = <T>(kind: AnswerKind, answer: RegistryAnswer<T>, asked: AskedFor) => Promise<SignedAnswer<T>>;

export function createAnswerVerifier(options: { registryUrl: string; keys: RegistryKeys; now: () => Date; maxAnswerAgeSeconds: number }): AnswerVerifier {
  const { registryUrl, keys } = options;

  function refused(answer: Extract<RegistryAnswer, { ok: true }>, problem: SignatureProblem, reason: string, kid: string | undefined) {
    // A pinned set never follows a rotation by itself: say so where it matters.
    const hint = problem === 'key-unknown' && keys.pinned ? ' The keys are pinned (trustedJwks): after a key rotation, pin the new key too.' : '';
    const envelope = clientErrorEnvelope('SIGNATURE_INVALID', `The registry's answer was refused: ${reason}${hint}`, {
      registry_url: registryUrl,
      problem,
      ...(kid === undefined ? {} : { kid }),
    });
    return { ok: false as const, status: answer.status, headers: answer.headers, text: JSON.stringify(envelope), envelope };
  }

  function unverifiable(answer: Extract<RegistryAnswer, { ok: true }>, unavailable: KeysUnavailable) {
    const envelope = errorEnvelope('DEPENDENCY_UNAVAILABLE', `${unavailable.message}; the answer could not be verified, so it is not used.`, {
      registry_url: registryUrl,
      ...unavailable.details,
    });
    return { ok: false as const, status: answer.status, headers: answer.headers, text: JSON.stringify(envelope), envelope };
  }

  return async (kind, answer, asked) => {
    if (!answer.ok) return answer;
    let held = await keys.current();
    if (!held.ok) return unverifiable(answer, held);
    let check = await verifySignedAnswer(answer.text, kind, held.keys, options.now());
    if (!check.ok && check.problem === 'key-unknown' && !keys.pinned) {
      // Most likely a key rotated in since the keys were read.
      held = await keys.after(held.read);
      if (!held.ok) return unverifiable(answer, held);
      check = await verifySignedAnswer(answer.text, kind, held.keys, options.now());
    }
    if (!check.ok) return refused(answer, check.problem, check.reason, check.kid);
    const unfit = answerFitsRequest(kind, answer.body as Record<string, unknown>, check.signature, asked, options.now(), options.maxAnswerAgeSeconds);
    if (unfit) return refused(answer, unfit.problem, unfit.reason, check.signature.kid);
    return { ...answer, signature: check.signature };
  };
}
