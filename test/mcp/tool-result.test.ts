import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  CLIENT_ERROR_CODES,
  clientErrorEnvelope,
  type ClientErrorCode,
} from '../../src/client/client-errors.ts';
import type { AnswerEnvelope } from '../../src/client/registry-client.ts';
import { ERROR_CODES, errorEnvelope, type ErrorCode } from '../../src/core/errors.ts';
import { toolResult } from '../../src/mcp/tool-result.ts';
import { readResult } from './helpers.ts';

const failure = (envelope: AnswerEnvelope, text = JSON.stringify(envelope)) =>
  ({ ok: false, status: null, headers: null, text, envelope }) as const;

describe('MCP tool results', () => {
  test("every code of the registry's and the client's tables is a tool error carrying that code, never a protocol error", () => {
    const envelopes: AnswerEnvelope[] = [
      ...Object.keys(ERROR_CODES).map((code) => errorEnvelope(code as ErrorCode)),
      ...Object.keys(CLIENT_ERROR_CODES).map((code) => clientErrorEnvelope(code as ClientErrorCode)),
    ];
    for (const envelope of envelopes) {
      const result = readResult(toolResult(failure(envelope)));
      assert.equal(result.isError, true, envelope.error.code);
      assert.deepEqual(result.json, envelope, envelope.error.code);
    }
  });

  test('a registry envelope is passed on as it was received, byte for byte', () => {
    const received =
      '{"error":{"code":"AGENT_NOT_FOUND","message":"No such agent.","details":{},"retryable":false,"retry_after_ms":null}}\n';
    const result = toolResult(failure(JSON.parse(received) as AnswerEnvelope, received));
    assert.deepEqual(result, { content: [{ type: 'text', text: received }], isError: true });
  });

  test('a success is one text item without isError', () => {
    const text = '{"results":[]}';
    assert.deepEqual(toolResult({ ok: true, status: 200, headers: new Headers(), text, body: {} }), {
      content: [{ type: 'text', text }],
    });
  });
});
