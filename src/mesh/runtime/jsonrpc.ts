/**
 * JSON-RPC 2.0 (https://www.jsonrpc.org/specification): parsing, envelope validation, batches,
 * notifications and dispatch to a method table. Pure: no transport, no Fastify; the HTTP, SSE and
 * WebSocket bindings wrap what `dispatch` returns.
 */
import type { TSchema } from 'typebox';
import { Compile, type Validator } from 'typebox/compile';
import { MeshRpcError, isMeshRpcError, meshErrorObject, type JsonRpcErrorObject } from './mesh-errors.ts';

export type JsonRpcId = string | number | null;

export type JsonRpcRequest = {
  readonly jsonrpc: '2.0';
  readonly method: string;
  readonly params?: unknown;
  /** Absent for a notification (spec §4.1). */
  readonly id?: JsonRpcId;
};

export type JsonRpcSuccess = { jsonrpc: '2.0'; id: JsonRpcId; result: unknown };
export type JsonRpcFailure = { jsonrpc: '2.0'; id: JsonRpcId; error: JsonRpcErrorObject };
export type JsonRpcResponse = JsonRpcSuccess | JsonRpcFailure;
export type JsonRpcNotification = { jsonrpc: '2.0'; method: string; params?: unknown };

/** One element of a payload: a well-formed request, or the error answering a malformed one. */
export type RpcEntry =
  | { readonly valid: true; readonly request: JsonRpcRequest; readonly notification: boolean }
  | { readonly valid: false; readonly response: JsonRpcFailure };

export type ParsedPayload =
  | { readonly kind: 'error'; readonly response: JsonRpcFailure }
  | { readonly kind: 'single'; readonly entry: RpcEntry }
  | { readonly kind: 'batch'; readonly entries: readonly RpcEntry[] };

/** A method answering once. `params` (a TypeBox schema) is checked first: a mismatch is -32602. */
export type UnaryMethod<C> = {
  readonly kind?: 'unary';
  readonly params?: TSchema;
  /** `params` is typed by each method (checked against `params` first); `never` accepts them all. */
  handle(params: never, context: C): unknown;
};

/** One item of a stream: a result, and the id a client resumes after (the SSE `id:` line). */
export type RpcStreamItem = { readonly eventId?: number; readonly result: unknown };

/** A method answering with a stream of results (SSE over HTTP, notifications over WebSocket). */
export type StreamMethod<C> = {
  readonly kind: 'stream';
  readonly params?: TSchema;
  open(params: never, context: C): Promise<AsyncIterable<RpcStreamItem>>;
};

export type RpcMethod<C> = UnaryMethod<C> | StreamMethod<C>;
export type RpcMethods<C> = ReadonlyMap<string, RpcMethod<C>>;

export type DispatchOptions = {
  /** Told about every non-mesh error before it is answered as a bare -32603. */
  readonly onInternalError?: (error: unknown, request: JsonRpcRequest) => void;
};

export type DispatchOutcome =
  /** `body` undefined: nothing to send (only notifications). */
  | { readonly kind: 'reply'; readonly body: JsonRpcResponse | JsonRpcResponse[] | undefined }
  | { readonly kind: 'stream'; readonly id: JsonRpcId; readonly items: AsyncIterable<RpcStreamItem> };

export function success(id: JsonRpcId, result: unknown): JsonRpcSuccess {
  return { jsonrpc: '2.0', id, result };
}

export function failure(id: JsonRpcId, error: JsonRpcErrorObject): JsonRpcFailure {
  return { jsonrpc: '2.0', id, error };
}

const isId = (value: unknown): value is JsonRpcId =>
  value === null || typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Checks one request object's envelope (spec §4): `jsonrpc`, `method`, `params`, `id`. */
export function validateEnvelope(value: unknown): RpcEntry {
  const invalid = (id: JsonRpcId, why: string): RpcEntry => ({
    valid: false,
    response: failure(id, meshErrorObject('INVALID_REQUEST', undefined, { reason: why })),
  });
  if (!isObject(value)) return invalid(null, 'a request must be an object');
  const hasId = Object.hasOwn(value, 'id');
  if (hasId && !isId(value.id)) return invalid(null, 'id must be a string, a number or null');
  const id = hasId ? (value.id as JsonRpcId) : null;
  if (value.jsonrpc !== '2.0') return invalid(id, 'jsonrpc must be "2.0"');
  if (typeof value.method !== 'string' || value.method === '') return invalid(id, 'method must be a non-empty string');
  if (value.params !== undefined && typeof value.params !== 'object') {
    return invalid(id, 'params must be an object or an array');
  }
  if (value.params === null) return invalid(id, 'params must be an object or an array');
  const request: JsonRpcRequest = hasId
    ? { jsonrpc: '2.0', method: value.method, params: value.params, id }
    : { jsonrpc: '2.0', method: value.method, params: value.params };
  return { valid: true, request, notification: !hasId };
}

/** Parses a payload's text: -32700 for bad JSON, -32600 for an empty batch. */
export function parsePayload(text: string): ParsedPayload {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { kind: 'error', response: failure(null, meshErrorObject('PARSE_ERROR')) };
  }
  return parseValue(value);
}

/** As `parsePayload`, for an already decoded value. */
export function parseValue(value: unknown): ParsedPayload {
  if (!Array.isArray(value)) return { kind: 'single', entry: validateEnvelope(value) };
  if (value.length === 0) {
    const error = meshErrorObject('INVALID_REQUEST', undefined, { reason: 'a batch must not be empty' });
    return { kind: 'error', response: failure(null, error) };
  }
  return { kind: 'batch', entries: value.map(validateEnvelope) };
}

/** The ids a payload asked to be answered, for transports that must fail it as a whole. */
export function requestIds(parsed: ParsedPayload): { batch: boolean; ids: JsonRpcId[] } {
  if (parsed.kind === 'error') return { batch: false, ids: [null] };
  const entries = parsed.kind === 'single' ? [parsed.entry] : parsed.entries;
  const ids = entries.flatMap((entry) => (entry.valid ? (entry.notification ? [] : [entry.request.id ?? null]) : [entry.response.id]));
  return { batch: parsed.kind === 'batch', ids };
}

/** Params validators, compiled once per schema (every request is checked). */
const validators = new WeakMap<TSchema, Validator>();

function validatorFor(schema: TSchema): Validator {
  let validator = validators.get(schema);
  if (!validator) {
    validator = Compile(schema) as unknown as Validator;
    validators.set(schema, validator);
  }
  return validator;
}

/** A validation error in words; an enum's reason lists its values, so the caller can fix the call. */
function reasonOf(error: { message: string; params?: unknown }): string {
  const allowed = (error.params as { allowedValues?: unknown } | undefined)?.allowedValues;
  return Array.isArray(allowed) ? `${error.message}: ${allowed.join(', ')}` : error.message;
}

function checkParams(method: RpcMethod<unknown>, params: unknown): unknown {
  if (!method.params) return params;
  const value = params ?? {};
  const validator = validatorFor(method.params);
  if (validator.Check(value)) return value;
  const errors = validator
    .Errors(value)
    .slice(0, 10)
    .map((error) => ({ pointer: error.instancePath || '/', reason: reasonOf(error) }));
  throw new MeshRpcError('VALIDATION_ERROR', undefined, { errors });
}

/** The error member answering a thrown value: mesh errors as they are, anything else a bare -32603. */
export function errorFor(error: unknown, request: JsonRpcRequest, options: DispatchOptions): JsonRpcErrorObject {
  if (isMeshRpcError(error)) return error.toErrorObject();
  options.onInternalError?.(error, request);
  return meshErrorObject('INTERNAL_ERROR');
}

async function callUnary<C>(
  method: UnaryMethod<C>,
  request: JsonRpcRequest,
  context: C,
  options: DispatchOptions,
): Promise<JsonRpcResponse> {
  const id = request.id ?? null;
  try {
    return success(id, (await method.handle(checkParams(method, request.params) as never, context)) ?? null);
  } catch (error) {
    return failure(id, errorFor(error, request, options));
  }
}

/** Answers one request of a batch (or a single unary one); streams cannot share a batch. */
async function answerEntry<C>(
  entry: RpcEntry,
  methods: RpcMethods<C>,
  context: C,
  options: DispatchOptions,
  inBatch: boolean,
): Promise<JsonRpcResponse | undefined> {
  if (!entry.valid) return entry.response;
  const { request, notification } = entry;
  const method = methods.get(request.method);
  let response: JsonRpcResponse;
  if (!method) {
    response = failure(request.id ?? null, meshErrorObject('METHOD_NOT_FOUND', undefined, { method: request.method }));
  } else if (method.kind === 'stream') {
    if (notification) {
      await startAndDiscard(method, request, context, options);
      return undefined;
    }
    const reason = inBatch ? 'streaming methods cannot be batched' : 'streaming is not available here';
    response = failure(request.id ?? null, meshErrorObject('INVALID_REQUEST', undefined, { reason }));
  } else {
    response = await callUnary(method, request, context, options);
  }
  return notification ? undefined : response;
}

/** A notification to a streaming method still has its effect (e.g. a task starts); nobody listens. */
async function startAndDiscard<C>(
  method: StreamMethod<C>,
  request: JsonRpcRequest,
  context: C,
  options: DispatchOptions,
): Promise<void> {
  try {
    const items = await method.open(checkParams(method, request.params) as never, context);
    await items[Symbol.asyncIterator]().return?.();
  } catch (error) {
    if (!isMeshRpcError(error)) options.onInternalError?.(error, request);
  }
}

/**
 * Runs a parsed payload against a method table. A single request to a streaming method returns its
 * stream (the transport frames each item as a response with the request's id); batch members run
 * concurrently and answer in request order, notifications are not answered (spec §6).
 */
export async function dispatch<C>(
  parsed: ParsedPayload,
  methods: RpcMethods<C>,
  context: C,
  options: DispatchOptions = {},
): Promise<DispatchOutcome> {
  if (parsed.kind === 'error') return { kind: 'reply', body: parsed.response };
  if (parsed.kind === 'batch') {
    const answers = await Promise.all(parsed.entries.map((entry) => answerEntry(entry, methods, context, options, true)));
    const body = answers.filter((answer): answer is JsonRpcResponse => answer !== undefined);
    return { kind: 'reply', body: body.length > 0 ? body : undefined };
  }
  const { entry } = parsed;
  if (entry.valid && !entry.notification) {
    const method = methods.get(entry.request.method);
    if (method?.kind === 'stream') {
      const id = entry.request.id ?? null;
      try {
        const items = await method.open(checkParams(method, entry.request.params) as never, context);
        return { kind: 'stream', id, items };
      } catch (error) {
        return { kind: 'reply', body: failure(id, errorFor(error, entry.request, options)) };
      }
    }
  }
  return { kind: 'reply', body: await answerEntry(entry, methods, context, options, false) };
}
