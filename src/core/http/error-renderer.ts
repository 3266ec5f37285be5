import type { FastifyReply } from 'fastify';
import type { ErrorCode } from '../errors.ts';

/**
 * Writes an error answer. The registry's is the envelope; a surface that speaks another standard (the
 * FHIR directory's OperationOutcome) passes its own, and every error is still decided in one place
 * (registry/http/error-handler.ts).
 */
export type ErrorRenderer = (reply: FastifyReply, code: ErrorCode, message: string | undefined, details: Record<string, unknown>, retryAfterMs?: number | null) => FastifyReply;
