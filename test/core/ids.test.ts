import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { agentUri, newUlid, parseAgentId, registryUri } from '../../src/core/ids.ts';
import { normaliseJurisdiction } from '../../src/core/jurisdictions.ts';

describe('identifiers and jurisdictions', () => {
  test('agent and registry URIs write the jurisdiction lower-case', () => {
    assert.equal(agentUri('GB', '01JABCDEFGHJKMNPQRSTVWXYZ0'), 'registry://gb/agents/01JABCDEFGHJKMNPQRSTVWXYZ0');
    assert.equal(registryUri('FR', 'ans'), 'registry://fr/registries/ans');
  });

  test('ULIDs made in the same millisecond still sort in creation order', () => {
    const ids = Array.from({ length: 50 }, () => newUlid(1_700_000_000_000));
    assert.deepEqual([...ids].sort(), ids);
  });

  test('an agent id is a ULID or an agent URI; anything else is not one', () => {
    const ulid = newUlid();
    assert.deepEqual(parseAgentId(ulid), { ulid });
    assert.deepEqual(parseAgentId(ulid.toLowerCase()), { ulid });
    assert.deepEqual(parseAgentId(`registry://gb/agents/${ulid}`), { ulid, jurisdiction: 'GB' });
    for (const bad of ['', 'abc', `registry://uk/agents/${ulid}`, `registry://gb/registries/${ulid}`, `${ulid}x`]) {
      assert.equal(parseAgentId(bad), undefined, bad);
    }
  });

  test('jurisdictions are checked against the real ISO 3166-1 list', () => {
    assert.equal(normaliseJurisdiction('gb'), 'GB');
    assert.equal(normaliseJurisdiction('US'), 'US');
    assert.equal(normaliseJurisdiction('AQ'), 'AQ');
    for (const bad of ['UK', 'EU', 'XK', 'ZZ', 'G', 'GBR', '']) assert.equal(normaliseJurisdiction(bad), undefined, bad);
  });
});
