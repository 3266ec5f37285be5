import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, test, type TestContext } from 'node:test';
import { startRegistries, testScope } from '../helpers/listening.ts';
import { mcpEnv, runToEnd, startMcpTestRegistry, WARD_CLI } from './helpers.ts';
import { refusedPort } from '../helpers/refused-port.ts';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const WELL_FORMED_KEY = `rk_${'A1b2C3d4'.repeat(5)}xyz`;
const ward = (t: TestContext, env: Record<string, string>, args = ['mcp', '--transport', 'stdio']) =>
  runToEnd(t, process.execPath, [WARD_CLI, ...args], mcpEnv(env));

/** Exit code 1, nothing on stdout, and `ward: configuration error: <variable>: …` on stderr. */
function assertConfigurationError(
  result: { code: number | null; stdout: string; stderr: string },
  variable: string,
  detail: RegExp,
): void {
  assert.equal(result.code, 1, result.stderr);
  assert.equal(result.stdout, '', 'stdout stays clean even when start-up fails');
  assert.match(result.stderr, new RegExp(`^ward: configuration error: ${variable}: `, 'm'));
  assert.match(result.stderr, detail);
}

describe('ward mcp refuses to start with an unusable configuration, naming the variable', () => {
  test('REGISTRY_URL missing, not a URL, not http(s), or carrying credentials', async (t) => {
    assertConfigurationError(
      await ward(t, { REGISTRY_API_KEY: WELL_FORMED_KEY }),
      'REGISTRY_URL',
      /is required: the registry's base URL/,
    );
    assertConfigurationError(
      await ward(t, { REGISTRY_URL: 'registry.example.org', REGISTRY_API_KEY: WELL_FORMED_KEY }),
      'REGISTRY_URL',
      /is not a URL/,
    );
    assertConfigurationError(
      await ward(t, { REGISTRY_URL: 'ftp://registry.example.org', REGISTRY_API_KEY: WELL_FORMED_KEY }),
      'REGISTRY_URL',
      /http:\/\/ or https:\/\//,
    );
    assertConfigurationError(
      await ward(t, { REGISTRY_URL: 'http://me:pw@registry.example.org', REGISTRY_API_KEY: WELL_FORMED_KEY }),
      'REGISTRY_URL',
      /credentials/,
    );
  });

  test('REGISTRY_URL where no registry answers, or where something else answers', async (t) => {
    const port = await refusedPort();
    assertConfigurationError(
      await ward(t, { REGISTRY_URL: `http://127.0.0.1:${port}`, REGISTRY_API_KEY: WELL_FORMED_KEY }),
      'REGISTRY_URL',
      /no registry answered at http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\)/,
    );
    const registry = await startMcpTestRegistry(t);
    const wrongPath = await ward(t, {
      REGISTRY_URL: `${registry.baseUrl}/v1`,
      REGISTRY_API_KEY: registry.key,
    });
    assertConfigurationError(wrongPath, 'REGISTRY_URL', /answered HTTP 404/);
  });

  test('REGISTRY_API_KEY missing for a registry that authenticates, malformed (not echoed), or unknown to it', async (t) => {
    const registry = await startMcpTestRegistry(t);
    // A registry with authentication on (JWT; its JWKS is never fetched here): its metadata lists it.
    const [secured] = await startRegistries(testScope(t), 'sqlite', {
      env: { REGISTRY_AUTH_MODE: 'jwt', REGISTRY_JWT_JWKS_URI: 'http://127.0.0.1:9/jwks.json', REGISTRY_JWT_ISSUER: 'https://issuer.example', REGISTRY_JWT_AUDIENCE: 'ward' },
    });
    assertConfigurationError(
      await ward(t, { REGISTRY_URL: (secured as { baseUrl: string }).baseUrl }),
      'REGISTRY_API_KEY',
      /is required: the registry at http:\/\/127\.0\.0\.1:\d+ authenticates its callers; create one with `npx ward keys create/,
    );
    const malformed = await ward(t, {
      REGISTRY_URL: registry.baseUrl,
      REGISTRY_API_KEY: 'secret-password-123',
    });
    assertConfigurationError(malformed, 'REGISTRY_API_KEY', /is not a registry API key/);
    assert.doesNotMatch(malformed.stderr, /secret-password-123/);
    const unknownKey = `rk_${randomBytes(32).toString('hex')}`;
    const unknown = await ward(t, { REGISTRY_URL: registry.baseUrl, REGISTRY_API_KEY: unknownKey });
    assertConfigurationError(unknown, 'REGISTRY_API_KEY', /refused the key \(UNAUTHORIZED/);
    assert.doesNotMatch(unknown.stderr, new RegExp(unknownKey));
  });

  test('production refuses a plain-http registry URL that is not loopback; MCP_PORT must be a port', async (t) => {
    assertConfigurationError(
      await ward(t, {
        REGISTRY_ENV: 'production',
        REGISTRY_URL: 'http://registry.example.org',
        REGISTRY_API_KEY: WELL_FORMED_KEY,
      }),
      'REGISTRY_URL',
      /https:\/\/ when REGISTRY_ENV=production/,
    );
    assertConfigurationError(
      await ward(
        t,
        { REGISTRY_URL: 'http://127.0.0.1:1', REGISTRY_API_KEY: WELL_FORMED_KEY, MCP_PORT: 'eighty' },
        ['mcp', '--transport', 'sse'],
      ),
      'MCP_PORT',
      /invalid value/,
    );
  });

  test('an unknown transport or a bad --port prints the usage and exits 2', async (t) => {
    for (const args of [
      ['mcp', '--transport', 'websocket'],
      ['mcp', '--transport', 'sse', '--port', '99999'],
      ['mcp', '--verbose'],
    ]) {
      const result = await ward(t, {}, args);
      assert.equal(result.code, 2, args.join(' '));
      assert.equal(result.stdout, '');
      assert.match(result.stderr, /Usage: ward mcp \[--transport stdio\|sse\]/);
    }
  });

  test('a port already in use stops start-up with a non-zero exit', async (t) => {
    const registry = await startMcpTestRegistry(t);
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    t.after(() => new Promise((resolve) => busy.close(resolve)));
    const { port } = busy.address() as AddressInfo;
    const result = await ward(t, { REGISTRY_URL: registry.baseUrl, REGISTRY_API_KEY: registry.key }, [
      'mcp',
      '--transport',
      'sse',
      '--port',
      String(port),
    ]);
    assert.equal(result.code, 1);
    assert.equal(result.stderr.trim(), `ward: port ${port} on 127.0.0.1 is already in use (another Ward, or another program): choose another port`);
  });
});

describe('an MCP client connecting to a ward mcp whose configuration cannot work is told why', () => {
  test('the SDK client: connect fails with the reason, naming the variable', async (t) => {
    const registry = await startMcpTestRegistry(t);
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [WARD_CLI, 'mcp'],
      env: mcpEnv({ REGISTRY_URL: registry.baseUrl, REGISTRY_API_KEY: 'rk_…' }),
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const client = new Client({ name: 'startup-test', version: '1.0.0' });
    await assert.rejects(client.connect(transport), (error: Error) => {
      assert.match(error.message, /-32603/);
      assert.match(error.message, /ward mcp: configuration error: REGISTRY_API_KEY: is not a registry API key/);
      return true;
    });
    await transport.close();
    assert.match(stderr, /^ward: configuration error: REGISTRY_API_KEY: /m);
  });

  test('on the wire: every request gets the error, notifications none, and the exit code is 1 once stdin ends', async (t) => {
    const child = spawn(process.execPath, [WARD_CLI, 'mcp'], {
      env: mcpEnv({ REGISTRY_URL: 'registry.example.org' }),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    t.after(() => child.kill('SIGKILL'));
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
    child.stdin.end(
      [
        JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }),
        JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
        'not json',
        JSON.stringify({ jsonrpc: '2.0', id: 'two', method: 'tools/list' }),
      ].join('\n') + '\n',
    );
    assert.equal(await exited, 1);
    const answers = stdout.trim().split('\n').map((line) => JSON.parse(line));
    assert.deepEqual(answers.map((answer) => answer.id), [1, 'two']);
    for (const answer of answers) {
      assert.equal(answer.error.code, -32603);
      assert.match(answer.error.message, /^ward mcp: configuration error: REGISTRY_URL: is not a URL/);
      assert.equal(answer.error.data.variable, 'REGISTRY_URL');
    }
    assert.match(stderr, /^ward: configuration error: REGISTRY_URL: is not a URL/m);
  });
});
