/**
 * SSRF guard for URLs others choose (#19 item 6): every spelling of a loopback, private, link-local,
 * CGNAT or unspecified address is refused before any connection; with allowPrivate the same URL is
 * fetched (development keeps loopback for local work).
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import { InvalidStatusError, PrivateAddressError, createCheckedFetch, createGuardedFetch } from '../../../src/core/net/guarded-fetch.ts';
import { isPrivateAddress } from '../../../src/core/net/private-addresses.ts';

async function loopbackServer(t: { after(fn: () => unknown): void }) {
  let connections = 0;
  const server = createServer((_request, response) => response.writeHead(200, { 'content-type': 'application/json' }).end('{"keys":[]}'));
  server.on('connection', () => (connections += 1));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  return { port: (server.address() as AddressInfo).port, connections: () => connections };
}

const SPELLINGS = [
  '127.0.0.1',
  '127.1.2.3',
  'localhost',
  '[::1]',
  '[::ffff:127.0.0.1]',
  '[::ffff:7f00:1]',
  '2130706433',
  '0x7f000001',
  '0177.0.0.1',
  '0x7f.1',
  '0.0.0.0',
  '0',
  '[::]',
  '10.0.0.1',
  '172.16.5.4',
  '192.168.1.1',
  '100.64.0.1',
  '169.254.169.254',
  '[fe80::1]',
  '[fc00::1]',
  '[fd12:3456::1]',
  // Security round 4 (issue 41, finding 6): IPv4-compatible, NAT64 and 6to4 spellings of loopback.
  '[::127.0.0.1]',
  '[::7f00:1]',
  '[64:ff9b::127.0.0.1]',
  '[64:ff9b::7f00:1]',
  '[2002:7f00:1::]',
];

describe('the private-address list (issue 41, finding 6)', () => {
  test('benchmarking, multicast and reserved IPv4 ranges, and IPv4 carried in IPv6, are not public', () => {
    for (const address of [
      '198.18.0.1', '198.19.255.254', '224.0.0.1', '239.255.255.250', '240.0.0.1', '255.255.255.255',
      '::a00:1', '::10.0.0.1', '::169.254.169.254', '::ffff:a9fe:a9fe', '64:ff9b::a9fe:a9fe', '64:ff9b::192.168.1.1',
      '64:ff9b:1::1', '2002:c0a8:101::1', 'ff02::1', 'fec0::1', '0:0:0:0:0:ffff:7f00:1', '::ffff:0:7f00:1',
    ]) assert.equal(isPrivateAddress(address), true, address);
  });
  test('public addresses, whatever their spelling, stay public', () => {
    for (const address of ['8.8.8.8', '198.17.255.255', '198.20.0.1', '223.255.255.255', '2001:4860:4860::8888', '64:ff9b::8.8.8.8', '::ffff:8.8.8.8', '2002:808:808::1', '2606:4700::1111']) {
      assert.equal(isPrivateAddress(address), false, address);
    }
  });
});

describe('guarded fetch', () => {
  for (const host of SPELLINGS) {
    test(`refuses ${host} without connecting`, async (t) => {
      const server = await loopbackServer(t);
      const guarded = createGuardedFetch({ allowPrivate: false });
      await assert.rejects(guarded(`http://${host}:${server.port}/jwks.json`), (error: unknown) => {
        const cause = error instanceof PrivateAddressError ? error : (error as { cause?: unknown }).cause;
        return cause instanceof PrivateAddressError || (error as { code?: string }).code === 'EPRIVATE';
      });
      assert.equal(server.connections(), 0);
    });
  }

  test('allowPrivate (development) fetches loopback as fetch does', async (t) => {
    const server = await loopbackServer(t);
    const open = createGuardedFetch({ allowPrivate: true });
    const response = await open(`http://127.0.0.1:${server.port}/jwks.json`);
    assert.deepEqual(await response.json(), { keys: [] });
  });

  test('only http and https', async () => {
    const guarded = createGuardedFetch({ allowPrivate: false });
    await assert.rejects(guarded('file:///etc/passwd'), TypeError);
  });
});

describe('the node:http fetch behind the guard', () => {
  test('a status no Response can hold (600) is a rejection, not an exception that ends the process', async (t) => {
    const server = createServer((request) => {
      request.socket.end('HTTP/1.1 600 Odd\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.after(() => server.close());
    const { port } = server.address() as AddressInfo;
    // Refusing nothing: the production code path, reaching loopback.
    const checked = createCheckedFetch(() => false);
    let uncaught: unknown;
    const onUncaught = (error: unknown) => (uncaught = error);
    process.prependListener('uncaughtException', onUncaught);
    t.after(() => process.removeListener('uncaughtException', onUncaught));
    await assert.rejects(checked(`http://127.0.0.1:${port}/card`), (error: unknown) => error instanceof InvalidStatusError && error.status === 600);
    assert.equal(uncaught, undefined);
    const ok = createServer((_q, r) => r.writeHead(200, { 'content-type': 'application/json' }).end('{"a":1}'));
    await new Promise<void>((resolve) => ok.listen(0, '127.0.0.1', resolve));
    t.after(() => ok.close());
    const answer = await checked(`http://127.0.0.1:${(ok.address() as AddressInfo).port}/`);
    assert.deepEqual(await answer.json(), { a: 1 }, 'the same fetch reads a proper answer');
  });
});
