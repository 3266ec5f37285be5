import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { SignedTrustBundle } from '../../src/contract/trust-bundle.ts';
import { rootAnchor, threeTiers } from '../helpers/federation.ts';
import { ORG_URI, ROOT_URI, SOVEREIGN_URI, buildChain, type Chain } from '../helpers/federation-chain.ts';
import { registerAgent, ulidOf, writeHeaders } from '../helpers/registry.ts';
import { runWard } from '../helpers/ward-process.ts';
import { makeCertificate } from '../registry/agents/evidence/fixtures.ts';

describe('ward trust verify', () => {
  let chain: Chain;
  let dir: string;
  const file = (name: string, content: unknown) => {
    const path = join(dir, name);
    writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
    return path;
  };

  before(async () => {
    chain = await buildChain(new Date());
    dir = mkdtempSync(join(tmpdir(), 'ward-trust-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('a valid chain prints the chain and exits 0, with an anchor file or a bare JWKS', async (t) => {
    const bundle = file('bundle.json', chain.bundle);
    const result = await runWard(t, ['trust', 'verify', bundle, '--anchor', file('anchor.json', chain.anchor)]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /result:\s+valid \(offline\)/);
    for (const uri of [ROOT_URI, SOVEREIGN_URI, ORG_URI, chain.bundle.subject]) assert.ok(result.stdout.includes(uri), uri);
    const bare = await runWard(t, ['trust', 'verify', bundle, '--anchor', file('jwks.json', chain.anchor.jwks)]);
    assert.equal(bare.code, 0, bare.stderr);
  });

  test('an invalid chain prints each error code and exits 1', async (t) => {
    const [header, payload] = (chain.statements[1] as string).split('.');
    const tampered = { ...chain.bundle, statements: [chain.statements[0], `${header}.${payload}.AAAA`] };
    const result = await runWard(t, ['trust', 'verify', file('tampered.json', tampered), '--anchor', file('anchor.json', chain.anchor)]);
    assert.equal(result.code, 1);
    assert.match(result.stdout, /INVALID/);
    assert.match(result.stdout, /STATEMENT_SIGNATURE_INVALID\s+statement 1/);
    // --at moves the clock: two hours on, the statements and the bundle have all expired.
    const later = new Date(Date.now() + 2 * 60 * 60 * 1000).toISOString();
    const expired = await runWard(t, ['trust', 'verify', file('bundle.json', chain.bundle), '--anchor', file('anchor.json', chain.anchor), '--at', later]);
    assert.equal(expired.code, 1);
    assert.match(expired.stdout, /STATEMENT_EXPIRED[\s\S]*BUNDLE_EXPIRED/);
  });

  test('--online prints the trust marks and their status at the issuer: active, then revoked once the agent is suspended', async (t) => {
    // Three registries on loopback (in-process); the CLI reaches their status endpoints over HTTP.
    const { root, org } = await threeTiers(t, 'sqlite');
    const agent = await registerAgent(org, { trust: { certificates: [makeCertificate().pem], signatures: [], attestations: [] } });
    const answer = await org.call({ method: 'GET', url: `/v1/trust/bundle?subject=${encodeURIComponent(agent.agent_id)}` });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    const bundle = file('marked-bundle.json', answer.body as SignedTrustBundle);
    const anchor = file('root-anchor.json', await rootAnchor(root));
    const verify = () => runWard(t, ['trust', 'verify', bundle, '--anchor', anchor, '--online']);
    const active = await verify();
    assert.equal(active.code, 0, `${active.stdout}${active.stderr}`);
    assert.match(active.stdout, /marks:\s+urn:ward:trust-mark:trust-validated; /);
    assert.match(active.stdout, /status at the issuer: urn:ward:trust-mark:trust-validated: active/);
    assert.match(active.stdout, /result:\s+valid \(every statement confirmed active by its issuer\)/);

    const suspended = await org.call({ method: 'POST', url: `/v1/agents/${ulidOf(agent.agent_id)}/suspend`, headers: writeHeaders(), payload: { reason: 'security review' } });
    assert.equal(suspended.status, 200);
    const revoked = await verify();
    assert.equal(revoked.code, 1, revoked.stdout);
    assert.match(revoked.stdout, /status at the issuer: urn:ward:trust-mark:trust-validated: revoked/);
    assert.match(revoked.stdout, /TRUST_MARK_REVOKED\s+trust mark 1 \(urn:ward:trust-mark:trust-validated\): .* says it is revoked/);
  });

  test('usage errors exit 2: missing arguments, unreadable or invalid files, a bad --at', async (t) => {
    const bundle = file('bundle.json', chain.bundle);
    const anchor = file('anchor.json', chain.anchor);
    const cases: string[][] = [
      ['trust'],
      ['trust', 'verify', bundle],
      ['trust', 'verify', join(dir, 'missing.json'), '--anchor', anchor],
      ['trust', 'verify', file('broken.json', '{"subject": '), '--anchor', anchor],
      ['trust', 'verify', bundle, '--anchor', file('not-anchor.json', { anchors: [] })],
      ['trust', 'verify', bundle, '--anchor', anchor, '--at', 'yesterday'],
    ];
    const results = await Promise.all(cases.map((args) => runWard(t, args)));
    for (const [index, result] of results.entries()) {
      assert.equal(result.code, 2, `${cases[index]?.join(' ')}: ${result.stdout}${result.stderr}`);
      assert.match(result.stderr, /Usage: ward trust verify/);
    }
  });
});
