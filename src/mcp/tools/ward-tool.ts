import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { Static, TObject } from 'typebox';
import { errorEnvelope } from '../../core/errors.ts';
import type { RegistryAnswer, RegistryClient } from '../../client/registry-client.ts';

// ajv-formats is CommonJS with a default export.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

// Strict like the registry's bodies: no type coercion, unknown arguments refused, every problem
// reported; defaults from the schema are filled in, so the registry sees what tools/list promised.
const ajv = new Ajv({
  coerceTypes: false,
  useDefaults: true,
  removeAdditional: false,
  allErrors: true,
  strict: false,
});
addFormats(ajv);

/** MCP tool annotations (hints to clients, not guarantees). */
export type ToolHints = {
  readOnlyHint: boolean;
  destructiveHint?: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
};

/** One tool as the MCP server lists and runs it. */
export type WardTool = {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  /** JSON Schema of the arguments, exactly as `tools/list` shows it. */
  readonly inputSchema: TObject;
  readonly annotations: ToolHints;
  /**
   * Checks the arguments against {@link WardTool.inputSchema}; only if they pass is the registry
   * called. A refusal is a `VALIDATION_ERROR` envelope made here, so a client reads one error shape.
   */
  invoke(args: unknown, registry: RegistryClient, signal: AbortSignal): Promise<RegistryAnswer>;
};

/** Builds a {@link WardTool}: `call` receives arguments that match the schema, defaults applied. */
export function defineTool<S extends TObject>(definition: {
  name: string;
  title: string;
  description: string;
  inputSchema: S;
  annotations: ToolHints;
  call(args: Static<S>, registry: RegistryClient, signal: AbortSignal): Promise<RegistryAnswer>;
}): WardTool {
  const validate = ajv.compile(definition.inputSchema);
  const { call, ...listing } = definition;
  return {
    ...listing,
    async invoke(args, registry, signal) {
      // Validation fills in defaults in place: work on a copy of what the client sent.
      const candidate = structuredClone(args ?? {});
      if (!validate(candidate)) return refusal(definition.name, validate.errors ?? []);
      return call(candidate as Static<S>, registry, signal);
    },
  };
}

function refusal(tool: string, errors: readonly ErrorObject[]): RegistryAnswer {
  const envelope = errorEnvelope(
    'VALIDATION_ERROR',
    `Invalid arguments for ${tool}; nothing was sent to the registry.`,
    {
      tool,
      errors: errors.map(toIssue),
    },
  );
  return { ok: false, status: null, headers: null, text: JSON.stringify(envelope), envelope };
}

/**
 * One ajv error as `{in, pointer, reason}` (the registry's `details.errors[]` shape, contract §2), the
 * pointer into the arguments object. Reasons name the rule, never the value, which may be PHI.
 */
const ARGUMENT_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

function toIssue(error: ErrorObject): { in: 'arguments'; pointer: string; reason: string } {
  const params = error.params as Record<string, unknown>;
  // An unknown argument's name comes from the client and could itself be a value (the registry's PHI
  // guard treats object keys the same way): it is named only when it looks like a name.
  const unknown = params.additionalProperty;
  const child =
    params.missingProperty ??
    (typeof unknown === 'string' && ARGUMENT_NAME.test(unknown) ? unknown : undefined);
  const pointer = `${error.instancePath}${typeof child === 'string' ? `/${child.replaceAll('~', '~0').replaceAll('/', '~1')}` : ''}`;
  const reason =
    params.additionalProperty !== undefined
      ? 'is not an argument of this tool'
      : params.missingProperty !== undefined
        ? 'is required'
        : Array.isArray(params.allowedValues)
          ? `must be one of ${params.allowedValues.join(', ')}`
          : (error.message ?? 'is invalid');
  return { in: 'arguments', pointer, reason };
}
