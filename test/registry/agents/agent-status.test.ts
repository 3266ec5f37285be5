import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AGENT_STATUSES } from '../../../src/contract/agent-record.ts';
import { STATUS_ACTION_NAMES, isMutable, nextStatus } from '../../../src/contract/agent-status.ts';

describe('agent status transitions', () => {
  test('the transition table is exactly the contract §3 table', () => {
    const table: Record<string, Record<string, string | undefined>> = {};
    for (const from of AGENT_STATUSES) {
      table[from] = Object.fromEntries(STATUS_ACTION_NAMES.map((action) => [action, nextStatus(from, action)]));
    }
    assert.deepEqual(table, {
      active: { suspend: 'suspended', reinstate: undefined, retire: 'retired', revoke: 'revoked' },
      suspended: { suspend: undefined, reinstate: 'active', retire: 'retired', revoke: 'revoked' },
      retired: { suspend: undefined, reinstate: undefined, retire: undefined, revoke: 'revoked' },
      revoked: { suspend: undefined, reinstate: undefined, retire: undefined, revoke: undefined },
    });
  });

  test('only active and suspended records may be updated', () => {
    assert.deepEqual(AGENT_STATUSES.filter(isMutable), ['active', 'suspended']);
  });
});
