/**
 * The reusable consent requirement (contract §10: -32003 Consent Denied). A method that touches a
 * patient's data declares which patient and purpose it needs; the runtime asks a `ConsentChecker`
 * before the handler runs. The requester is always the authenticated caller, never a parameter.
 */
import type { PurposeOfUse } from '../../core/vocabulary.ts';
import type { MeshCallContext } from './call-context.ts';
import { MeshRpcError } from './mesh-errors.ts';

/** What a consent check needs from the call: who asks, and the trace to continue. */
export type CallContextForConsent = Pick<MeshCallContext, 'principal' | 'traceparent'>;

export { PURPOSES_OF_USE, type PurposeOfUse } from '../../core/vocabulary.ts';

export type ConsentQuery = { readonly requester: string; readonly patient_ref: string; readonly purpose: PurposeOfUse };

/** Answers whether consent exists; the consent agent's own store, or a mesh call to it. */
export interface ConsentChecker {
  isGranted(query: ConsentQuery, call: CallContextForConsent): Promise<boolean>;
}

/**
 * A method's declaration that it needs consent. `patientRef` picks the patient from the params (no
 * patient: no check, e.g. an anonymous assessment); `purpose` defaults to `treatment`.
 */
export type ConsentRequirement<P = never> = {
  readonly patientRef: (params: P) => string | undefined;
  readonly purpose?: (params: P) => PurposeOfUse | undefined;
};

/** Throws -32003 unless `checker` confirms consent for the caller, patient and purpose. */
export async function assertConsent(
  checker: ConsentChecker,
  query: Omit<ConsentQuery, 'requester'>,
  call: CallContextForConsent,
): Promise<void> {
  const granted = await checker.isGranted({ ...query, requester: call.principal.sub }, call);
  if (!granted) {
    // The patient reference is not echoed: the caller knows it, and error data ends up in logs.
    throw new MeshRpcError('CONSENT_DENIED', undefined, { purpose: query.purpose, requester: call.principal.sub });
  }
}

/** Applies a method's requirement to its params; a no-op when the params name no patient. */
export async function checkRequirement<P>(
  checker: ConsentChecker,
  requirement: ConsentRequirement<P>,
  params: P,
  call: CallContextForConsent,
): Promise<void> {
  const patientRef = requirement.patientRef(params);
  if (patientRef === undefined) return;
  await assertConsent(checker, { patient_ref: patientRef, purpose: requirement.purpose?.(params) ?? 'treatment' }, call);
}

/** A checker that refuses everything: the safe default when no consent service is configured. */
export const DENY_ALL_CONSENT: ConsentChecker = { isGranted: async () => false };
