/**
 * Graceful shutdown of `ward registry` as a real process (cli/serving-command.ts): on SIGTERM a request
 * already in flight is answered before the process exits 0; a request that never finishes does not
 * hold the process: after REGISTRY_SHUTDOWN_GRACE_MS it exits 1 and its log says why.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { eventually } from '../helpers/eventually.ts';
import { agentBody } from '../helpers/registry.ts';

const root = new URL('../..', import.meta.url).pathname;

async function startRegistry(t: TestContext, graceMs: number): Promise<{ child: ChildProcess; port: number; output: () => string }> {
  const dir = mkdtempSync(join(tmpdir(), 'ward-shutdown-'));
  const child = spawn(process.execPath, ['src/cli/ward.ts', 'registry'], {
    cwd: root,
    env: { ...process.env, REGISTRY_DATA_DIR: dir, REGISTRY_PORT: '0', REGISTRY_HEALTH_PROBES: 'false', DATABASE_URL: '', REGISTRY_SHUTDOWN_GRACE_MS: String(graceMs) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  let output = '';
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /"url":"http:\/\/127\.0\.0\.1:(\d+)"/.exec(output);
      if (match) resolve(Number(match[1]));
    });
    child.once('exit', (code) => reject(new Error(`the registry exited with ${code}:\n${output}`)));
  });
  return { child, port, output: () => output };
}

/** A registration whose body is sent only in part: the request is in flight until `finish()`. */
async function halfSentRegistration(port: number): Promise<{ socket: Socket; finish: () => void; answer: Promise<string> }> {
  const body = JSON.stringify(agentBody());
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  let received = '';
  const answer = new Promise<string>((resolve) => {
    socket.on('data', (chunk) => (received += chunk.toString()));
    socket.on('close', () => resolve(received));
  });
  await new Promise<void>((resolve, reject) =>
    socket.write(
      `POST /v1/agents HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\nx-idempotency-key: ${crypto.randomUUID()}\r\n` +
        `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body.slice(0, 20)}`,
      (error) => (error ? reject(error) : resolve()),
    ),
  );
  // The server must have read the headers before the signal: a connection without a request yet is
  // idle, and an idle connection is closed at shutdown (rightly). The marker: an answer on another
  // connection, opened after these bytes were handed to the kernel. The server's one event loop reads
  // sockets as they become readable, so by the time it answers that later request it has read (and
  // parsed, synchronously) the headers that arrived before it.
  const live = await fetch(`http://127.0.0.1:${port}/livez`, { headers: { connection: 'close' } });
  assert.equal(live.status, 200);
  return { socket, answer, finish: () => socket.write(body.slice(20)) };
}

/** Whether a connection to `port` is refused (the listener closed). */
const refused = (port: number) =>
  new Promise<boolean>((resolve) => {
    const probe = connect(port, '127.0.0.1');
    probe.once('connect', () => (probe.destroy(), resolve(false)));
    probe.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });

const exited = (child: ChildProcess) => new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

describe('registry shutdown on SIGTERM', () => {
  test('a request in flight is answered, then the process exits 0', async (t) => {
    const { child, port } = await startRegistry(t, 60_000);
    const request = await halfSentRegistration(port);
    const exit = exited(child);
    child.kill('SIGTERM');
    // Closing has begun: the listener refuses new connections…
    await eventually(async () => ((await refused(port)) ? true : undefined), 'the listener to refuse new connections');
    assert.equal(child.exitCode, null, 'still finishing the request');
    // …and the request in flight completes normally.
    request.finish();
    assert.match(await request.answer, /^HTTP\/1\.1 201 /);
    assert.equal(await exit, 0);
  });

  test('a request that never finishes does not hold the process past the grace period', async (t) => {
    const { child, port, output } = await startRegistry(t, 1000);
    const request = await halfSentRegistration(port);
    t.after(() => request.socket.destroy());
    const exit = exited(child);
    child.kill('SIGTERM');
    assert.equal(await exit, 1);
    assert.match(output(), /shutdown did not finish in time; exiting/);
  });
});
