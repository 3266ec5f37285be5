/**
 * The gateway's PHI guard and file parts (decision 85): a base64 `raw` (or v0.3 `file.bytes`) part is
 * decoded whole and read as text, so encoding health data is no way around the guard (-32012, the
 * value never echoed, the agent never started); bytes that are not text are refused as unreadable
 * (-32602, `file_part_unreadable`); harmless text goes through to the agent, which decides by its
 * input modes (the probe declares none: -32005). A real gateway and agent process.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { readFileParts } from '../../../src/mesh/gateway/file-part-phi.ts';
import { scanForPhi } from '../../../src/core/phi/index.ts';
import { rpc } from '../helpers.ts';
import { agentHealth, startTestGateway } from './gateway-helpers.ts';

const HIDDEN = 'Patient John Smith has diabetes';
const base64 = (text: string | Buffer) => Buffer.from(text).toString('base64');
let nextId = 1;
const rawMessage = (raw: string) => ({
  message: { messageId: `g-${nextId++}`, role: 'ROLE_USER', parts: [{ text: 'see attached' }, { raw, mediaType: 'application/octet-stream' }] },
});

describe('gateway PHI guard: file parts', () => {
  test('the general scan alone misses a name and a condition in base64; the file-part reading finds it', () => {
    const body = { jsonrpc: '2.0', id: 1, method: 'SendMessage', params: rawMessage(base64(HIDDEN)) };
    assert.deepEqual(scanForPhi(body), [], 'base64 text without digits is not decoded by the general scan');
    assert.deepEqual(readFileParts(body).findings, [{ detector: 'patient_name_condition', pointer: '/params/message/parts/1/raw' }]);
    const v03 = [{ jsonrpc: '2.0', id: 2, method: 'tasks/send', params: { message: { parts: [{ kind: 'file', file: { bytes: base64(HIDDEN) } }] } } }];
    assert.deepEqual(readFileParts(v03).findings.map((finding) => finding.pointer), ['/0/params/message/parts/0/file/bytes']);
    assert.deepEqual(readFileParts({ params: rawMessage(base64(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2]))) }).unreadable, ['/params/message/parts/1/raw']);
    assert.deepEqual(readFileParts({ params: rawMessage(base64('a plain note')) }), { findings: [], unreadable: [] });
  });

  test('through a gateway: health data in a raw part is -32012, a binary part is refused, harmless text reaches the agent', async (t) => {
    const gateway = await startTestGateway(t, { probe: { entry: 'probe' } });
    const hidden = await rpc(`${gateway.url}/rpc/probe`, 'SendMessage', rawMessage(base64(HIDDEN)));
    assert.equal(hidden.error?.code, -32012, JSON.stringify(hidden));
    assert.doesNotMatch(JSON.stringify(hidden), /John Smith|UGF0aWVudCBKb2huIFNtaXRo/, 'neither the value nor its base64 is echoed');
    const binary = await rpc(`${gateway.url}/rpc/probe`, 'SendMessage', rawMessage(base64(Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10]))));
    assert.equal(binary.error?.code, -32602, JSON.stringify(binary));
    assert.equal(binary.error.data.reason, 'file_part_unreadable');
    assert.equal(binary.error.data.errors[0].pointer, '/params/message/parts/1/raw');
    assert.equal((await agentHealth(gateway, 'probe')).state, 'stopped', 'no agent saw either');
    const harmless = await rpc(`${gateway.url}/rpc/probe`, 'SendMessage', rawMessage(base64('This is test binary data')));
    assert.equal(harmless.error?.code, -32005, 'the probe declares no octet-stream: ContentTypeNotSupportedError from the agent');
    assert.equal((await agentHealth(gateway, 'probe')).state, 'running');
  });
});
