import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { registerOverHttp, startRegistries, testScope } from '../helpers/listening.ts';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const WARD_CLI = join(REPO_ROOT, 'src', 'cli', 'ward.ts');

/** Safety net only: turns a hang into a failure naming what was awaited; asserts nothing about speed. */
const WAIT_TIMEOUT_MS = 30_000;

export type McpTestRegistry = {
  baseUrl: string;
  /** A raw API key (business tier, read + write) for org `org-mcp`. */
  key: string;
  keyId: string;
  /** `METHOD /path?query` of every request the registry received, in order. */
  requests: string[];
  /** The `X-Idempotency-Key` of every `POST /v1/agents`, in order. */
  idempotencyKeys: Array<string | undefined>;
  /** An agent registered anonymously before the test: skill `triage.assess`, jurisdiction GB. */
  triageAgentId: string;
  createKey(body?: Record<string, unknown>): Promise<{ raw_key: string; key_id: string }>;
  revokeKey(keyId: string): Promise<void>;
};

/** A real registry listening on a free port (SQLite, health probes off), with a key and one agent. */
export async function startMcpTestRegistry(t: TestContext): Promise<McpTestRegistry> {
  const [instance] = await startRegistries(testScope(t), 'sqlite');
  if (!instance) throw new Error('no registry started');
  const { baseUrl } = instance;
  const requests: string[] = [];
  const idempotencyKeys: Array<string | undefined> = [];
  instance.app.server.on('request', (request: IncomingMessage) => {
    requests.push(`${request.method} ${request.url}`);
    if (request.method === 'POST' && request.url === '/v1/agents')
      idempotencyKeys.push(request.headers['x-idempotency-key'] as string | undefined);
  });
  const createKey = async (body: Record<string, unknown> = {}) => {
    const response = await fetch(`${baseUrl}/v1/admin/billing/api-keys`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        org_id: 'org-mcp',
        display_name: 'MCP test key',
        tier: 'business',
        scopes: ['registry:read', 'registry:write'],
        ...body,
      }),
    });
    if (response.status !== 201)
      throw new Error(`key creation failed: ${response.status} ${await response.text()}`);
    return (await response.json()) as { raw_key: string; key_id: string };
  };
  const revokeKey = async (keyId: string) => {
    const response = await fetch(`${baseUrl}/v1/admin/billing/api-keys/${keyId}`, { method: 'DELETE' });
    if (response.status !== 204) throw new Error(`key revocation failed: ${response.status}`);
  };
  const created = await createKey();
  const triageAgentId = await registerOverHttp(baseUrl, 'Triage for MCP tests');
  return {
    baseUrl,
    key: created.raw_key,
    keyId: created.key_id,
    requests,
    idempotencyKeys,
    triageAgentId,
    createKey,
    revokeKey,
  };
}

/** This process's environment without any Ward setting, plus `extra`: only what a test sets applies. */
export function mcpEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined || /^(REGISTRY_|DATABASE_|REDIS_|MESH_|CONSOLE_|GATEWAY_|MCP_)/.test(key))
      continue;
    env[key] = value;
  }
  return { ...env, ...extra };
}

/** The environment `ward mcp` needs to use `registry` (with its key unless another is given). */
export const envFor = (registry: McpTestRegistry, key = registry.key) =>
  mcpEnv({ REGISTRY_URL: registry.baseUrl, REGISTRY_API_KEY: key });

/** A display name no other test uses (an organisation has one live agent per name). */
export const uniqueName = (name: string) => `${name} ${randomBytes(3).toString('hex')}`;

/** An SDK client connected over stdio to `ward mcp --transport stdio` as a child process; closed when the test ends. */
export async function connectStdio(
  t: TestContext,
  env: Record<string, string>,
): Promise<{ client: Client; stderr: () => string }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [WARD_CLI, 'mcp', '--transport', 'stdio'],
    env,
    cwd: REPO_ROOT,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const client = new Client({ name: 'ward-test', version: '1.0.0' });
  t.after(() => client.close());
  await client.connect(transport);
  return { client, stderr: () => stderr };
}

export type ChildResult = {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
};

/** Runs a command to its end (stdin closed) and collects its output; killed if still running when the test ends. */
export function runToEnd(
  t: TestContext,
  command: string,
  args: readonly string[],
  env: Record<string, string>,
): Promise<ChildResult> {
  const child = spawn(command, args, { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  killAtEnd(t, child);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), WAIT_TIMEOUT_MS);
    child.once('error', reject);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/**
 * Starts `ward mcp --transport sse --port 0` and reads the address it logs on stderr. Stopped with
 * SIGTERM when the test ends (and the test waits for it to exit).
 */
export async function startHttpMcp(
  t: TestContext,
  env: Record<string, string>,
): Promise<{ baseUrl: string; child: ChildProcess; stdout: () => string }> {
  const child = spawn(process.execPath, [WARD_CLI, 'mcp', '--transport', 'sse', '--port', '0'], {
    cwd: REPO_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  killAtEnd(t, child);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  const baseUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`ward mcp did not log its address; stderr: ${stderr}`)),
      WAIT_TIMEOUT_MS,
    );
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
      const match = /listening on (http:\/\/\S+)\/mcp /.exec(stderr);
      if (!match?.[1]) return;
      clearTimeout(timer);
      resolve(match[1]);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`ward mcp exited (${code}) before listening; stderr: ${stderr}`));
    });
  });
  return { baseUrl, child, stdout: () => stdout };
}

function killAtEnd(t: TestContext, child: ChildProcess): void {
  t.after(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  });
}

/** A tool result as the tests read it: exactly one text item, its JSON parsed. */
export function readResult(result: unknown): { isError: boolean; json: any; text: string } {
  const { content, isError } = result as {
    content: Array<{ type: string; text: string }>;
    isError?: boolean;
  };
  if (content.length !== 1 || content[0]?.type !== 'text')
    throw new Error(`expected one text item, got ${JSON.stringify(content)}`);
  return { isError: isError === true, json: JSON.parse(content[0].text), text: content[0].text };
}

/** The number of requests whose `METHOD /path` starts with `prefix`. */
export const countRequests = (registry: McpTestRegistry, prefix: string) =>
  registry.requests.filter((line) => line.startsWith(prefix)).length;

