/**
 * The model that drives a run: the Anthropic Messages API with its computer-use tool, through the
 * vendor's own client library (`@anthropic-ai/sdk`). `COMPUTER_USE_MODEL_URL` points it elsewhere
 * (a gateway, or the scripted server the tests run on loopback); nothing here knows the difference.
 */
import Anthropic, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from '@anthropic-ai/sdk';
import type { BetaContentBlockParam, BetaMessage, BetaMessageParam, BetaToolUseBlock } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import type { Config } from '../core/config.ts';
import { VIEWPORT } from './console-browser.ts';

export type { BetaContentBlockParam as ModelContentBlock, BetaMessage as ModelMessage, BetaMessageParam as ModelMessageParam, BetaToolUseBlock as ModelToolUseBlock };

/**
 * The computer-use tool version a model speaks, and the beta flag that enables it: `computer_20250124`
 * for the Claude 3.7 and 4 models up to the 4.5 generation, `computer_20251124` for the models after
 * them (Opus 4.5, and the 4.6 generation on). Both carry the same actions this registry carries out.
 */
export function computerToolFor(model: string) {
  const screen = { name: 'computer' as const, display_width_px: VIEWPORT.width, display_height_px: VIEWPORT.height };
  return OLDER_TOOL_MODELS.some((pattern) => pattern.test(model))
    ? { tool: { type: 'computer_20250124' as const, ...screen }, beta: 'computer-use-2025-01-24' }
    : { tool: { type: 'computer_20251124' as const, ...screen }, beta: 'computer-use-2025-11-24' };
}

/** Claude 3.7, Sonnet 4, Opus 4 and 4.1, Sonnet 4.5 and Haiku 4.5 (with or without a date suffix). */
const OLDER_TOOL_MODELS = [/^claude-3/, /^claude-(sonnet|opus)-4(-\d{8})?$/, /^claude-opus-4-1/, /^claude-sonnet-4-5/, /^claude-haiku-4-5/];
const MAX_TOKENS = 4096;

/** Why a model call failed, as a run's `failure_reason` says it; `canceled` when the run was canceled. */
export class ModelCallError extends Error {
  readonly canceled: boolean;
  constructor(message: string, canceled = false) {
    super(message);
    this.canceled = canceled;
  }
}

export type ComputerUseModel = {
  /** The model asked (COMPUTER_USE_MODEL): a run's ledger names it, and the FHIR directory's Provenance of the run. */
  name: string;
  next(request: { system: string; messages: BetaMessageParam[]; signal: AbortSignal }): Promise<BetaMessage>;
};

export function createComputerUseModel(config: Config): ComputerUseModel {
  const timeoutSeconds = config.COMPUTER_USE_MODEL_TIMEOUT_SECONDS;
  const client = new Anthropic({
    apiKey: config.COMPUTER_USE_API_KEY ?? null,
    ...(config.COMPUTER_USE_MODEL_URL ? { baseURL: config.COMPUTER_USE_MODEL_URL } : {}),
    timeout: timeoutSeconds * 1000,
    // The vendor's 429 and 529 (overloaded) pass with a retry; a run then fails with the reason.
    maxRetries: 2,
  });
  const { tool, beta } = computerToolFor(config.COMPUTER_USE_MODEL);
  return {
    name: config.COMPUTER_USE_MODEL,
    async next({ system, messages, signal }) {
      try {
        return await client.beta.messages.create(
          { model: config.COMPUTER_USE_MODEL, max_tokens: MAX_TOKENS, system, messages, tools: [tool], betas: [beta] },
          { signal },
        );
      } catch (error) {
        throw explain(error, timeoutSeconds);
      }
    },
  };
}

function explain(error: unknown, timeoutSeconds: number): ModelCallError {
  if (error instanceof APIUserAbortError) return new ModelCallError('canceled', true);
  if (error instanceof APIConnectionTimeoutError) return new ModelCallError(`the model did not answer within ${timeoutSeconds} s (COMPUTER_USE_MODEL_TIMEOUT_SECONDS)`);
  if (error instanceof APIConnectionError) return new ModelCallError(`the model could not be reached (${error.cause instanceof Error ? error.cause.message : error.message})`);
  if (error instanceof APIError) {
    const detail = (error.error as { error?: { message?: unknown } } | undefined)?.error?.message;
    return new ModelCallError(`the model answered ${error.status ?? 'an error'}${typeof detail === 'string' ? `: ${detail.slice(0, 300)}` : ''}`);
  }
  return new ModelCallError(`the model call failed (${error instanceof Error ? error.message : String(error)})`);
}
