/**
 * `ward/client`: what Ward offers code that calls a registry (package.json `exports`). The typed client
 * of the `/v1` API, which verifies every discovery and routing answer against the registry's signing
 * keys by default; the verifier of those answers on its own; and the transparency-ledger auditor.
 * README "Using Ward from code" shows it in use; docs/errors.md lists the outcomes.
 */
export {
  createRegistryClient,
  isErrorEnvelope,
  type AgentRecord,
  type AnswerEnvelope,
  type CallOptions,
  type RegistryAnswer,
  type RegistryClient,
  type RegistryClientOptions,
  type SignedAnswer,
  type StatusAction,
} from './registry-client.ts';
export { CLIENT_ERROR_CODES, type ClientErrorCode, type ClientErrorEnvelope } from './client-errors.ts';
export {
  SIGNATURE_PROBLEMS,
  answerFitsRequest,
  verifySignedAnswer,
  type AnswerKind,
  type AnswerSignature,
  type AnswerVerification,
  type AskedFor,
  type SignatureProblem,
} from './signed-answer.ts';
export { auditLedger, type AuditCheck, type LedgerAuditOptions, type LedgerAuditReport } from './ledger-audit.ts';
// All of it: the proofs and the tree-head check (TreeHeadError, verifyConsistency, verifyInclusion,
// verifySignedTreeHead, SignedTreeHeadDocument, VerifiedTreeHead) are the auditor's public half.
export * from './ledger-verifier.ts';
export type { ErrorCode, ErrorEnvelope } from '../core/errors.ts';
export type { PublishedJwk } from '../core/crypto/key-set.ts';
