/**
 * The try page's MCP half: the console as an MCP client (the SDK's own, over streamable HTTP) of the
 * MCP server at `CONSOLE_MCP_URL` (`ward mcp --transport sse`). `tools/list` gives each tool's input
 * schema, which the page turns into a form ({@link fieldsOf}); what the form sends back is turned into
 * the tool's arguments by the same schema ({@link argumentsOf}) and the server checks them again.
 * The console imports nothing of the MCP server: it is a client over HTTP, as any MCP client is.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

/** A tool as `tools/list` gives it (what the page shows). */
export type McpTool = {
  name: string;
  title?: string | undefined;
  description?: string | undefined;
  inputSchema: { properties?: Record<string, JsonSchema>; required?: string[] };
  annotations?: { readOnlyHint?: boolean; destructiveHint?: boolean; idempotentHint?: boolean } | undefined;
};

/** The parts of JSON Schema a tool's argument form is built from. */
export type JsonSchema = {
  type?: string | string[];
  description?: string;
  enum?: unknown[];
  default?: unknown;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  items?: JsonSchema;
};

/** What a call came to: the tool's result (text items and whether it is an error), or why there is none. */
export type McpAnswer<T> = { ok: true; value: T } | { ok: false; reason: string };

export type ToolResult = { isError: boolean; texts: string[] };

/** Opens a client on `url`, runs `use`, closes it; whatever fails is a reason in words. */
async function withClient<T>(url: string, timeoutMs: number, use: (client: Client) => Promise<T>): Promise<McpAnswer<T>> {
  const client = new Client({ name: 'ward-console', version: '1.0.0' });
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { 'user-agent': 'ward-console' } } }), { timeout: timeoutMs });
    return { ok: true, value: await use(client) };
  } catch (error) {
    return { ok: false, reason: reasonOf(error) };
  } finally {
    await client.close().catch(() => undefined);
  }
}

function reasonOf(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown } } | null)?.cause?.code;
  if (typeof cause === 'string') return cause;
  const message = error instanceof Error ? error.message : String(error);
  // undici says only "fetch failed"; its cause is the useful part (ECONNREFUSED…), taken above when present.
  return message.length > 300 ? `${message.slice(0, 300)}…` : message;
}

/** `tools/list`. */
export async function listMcpTools(url: string, timeoutMs: number): Promise<McpAnswer<McpTool[]>> {
  return withClient(url, timeoutMs, async (client) => (await client.listTools(undefined, { timeout: timeoutMs })).tools as McpTool[]);
}

/** `tools/call`: the result's text items; `isError` when the tool (or the registry behind it) refused. */
export async function callMcpTool(url: string, name: string, args: Record<string, unknown>, timeoutMs: number): Promise<McpAnswer<ToolResult>> {
  return withClient(url, timeoutMs, async (client) => {
    const result = await client.callTool({ name, arguments: args }, undefined, { timeout: timeoutMs });
    const content = Array.isArray(result.content) ? (result.content as Array<{ type?: string; text?: string }>) : [];
    return { isError: result.isError === true, texts: content.filter((item) => item.type === 'text' && typeof item.text === 'string').map((item) => item.text as string) };
  });
}

/** How one argument is asked for in the form. */
export type Field =
  | { kind: 'select'; name: string; required: boolean; schema: JsonSchema; options: string[] }
  | { kind: 'number'; name: string; required: boolean; schema: JsonSchema; integer: boolean }
  | { kind: 'list'; name: string; required: boolean; schema: JsonSchema }
  | { kind: 'check'; name: string; required: boolean; schema: JsonSchema }
  | { kind: 'text'; name: string; required: boolean; schema: JsonSchema; inputType: 'text' | 'url' };

const typeOf = (schema: JsonSchema): string | undefined => (Array.isArray(schema.type) ? schema.type.find((type) => type !== 'null') : schema.type);

/** The form fields of a tool's input schema, in its order: an enum is a select, an array of strings a list, and so on. */
export function fieldsOf(tool: McpTool): Field[] {
  const required = new Set(tool.inputSchema.required ?? []);
  return Object.entries(tool.inputSchema.properties ?? {}).map(([name, schema]): Field => {
    const base = { name, required: required.has(name), schema };
    const type = typeOf(schema);
    if (Array.isArray(schema.enum)) return { ...base, kind: 'select', options: schema.enum.map(String) };
    if (type === 'integer' || type === 'number') return { ...base, kind: 'number', integer: type === 'integer' };
    if (type === 'array') return { ...base, kind: 'list' };
    if (type === 'boolean') return { ...base, kind: 'check' };
    return { ...base, kind: 'text', inputType: schema.format === 'uri' ? 'url' : 'text' };
  });
}

/**
 * The tool's arguments from what the form sent: empty fields left out, numbers as numbers (or the text,
 * for the server to refuse), a list one item a line (or comma), a checkbox as `true`.
 */
export function argumentsOf(tool: McpTool, form: Record<string, unknown>): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const field of fieldsOf(tool)) {
    const raw = form[field.name];
    const value = typeof raw === 'string' ? raw.trim() : undefined;
    if (field.kind === 'check') {
      if (value === 'true') args[field.name] = true;
      continue;
    }
    if (value === undefined || value === '') continue;
    if (field.kind === 'number') args[field.name] = /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value;
    else if (field.kind === 'list') args[field.name] = value.split(/[\n,]/).map((item) => item.trim()).filter(Boolean);
    else args[field.name] = value;
  }
  return args;
}
