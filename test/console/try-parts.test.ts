/**
 * The try page's pure parts: which gateway alias an advised endpoint names (and which it does not),
 * reading the operator's own mesh token, and an MCP tool's form built from its input schema and read
 * back into arguments.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeJwt, jwtVerify } from 'jose';
import { DEFAULT_MESH_JWT_SECRET } from '../../src/core/config.ts';
import { aliasAtGateway, developmentCredential, developmentTokensAllowed, DEV_TOKEN_SUB, ownCredential } from '../../src/console/pages/try-gateway.ts';
import { argumentsOf, fieldsOf, type McpTool } from '../../src/console/pages/try-mcp.ts';

test('an endpoint at the gateway names its alias; any other address names none', () => {
  const gateway = 'http://127.0.0.1:8100';
  assert.equal(aliasAtGateway(gateway, 'http://127.0.0.1:8100/rpc/triage/'), 'triage');
  assert.equal(aliasAtGateway(gateway, 'http://127.0.0.1:8100/rpc/clinician_avatar'), 'clinician_avatar');
  assert.equal(aliasAtGateway(gateway, 'https://agents.example.org/rpc/triage/'), undefined);
  assert.equal(aliasAtGateway(gateway, 'http://127.0.0.1:8100/rpc/triage/extra'), undefined);
  assert.equal(aliasAtGateway(gateway, 'http://127.0.0.1:81000/rpc/triage/'), undefined, 'a longer port is another address');
  assert.equal(aliasAtGateway(gateway, 'http://127.0.0.1:8100/rpc/../admin'), undefined);
});

test('a development token is a five-minute mesh token for the console, refused in production', async () => {
  assert.equal(developmentTokensAllowed('development'), true);
  assert.equal(developmentTokensAllowed('test'), true);
  assert.equal(developmentTokensAllowed('production'), false);
  const credential = await developmentCredential(new Date());
  const { payload, protectedHeader } = await jwtVerify(credential.token, new TextEncoder().encode(DEFAULT_MESH_JWT_SECRET));
  assert.equal(protectedHeader.alg, 'HS256');
  assert.equal(payload.sub, DEV_TOKEN_SUB);
  assert.equal(payload.scope, 'mesh:invoke');
  assert.equal((payload.exp ?? 0) - (payload.iat ?? 0), 300);
  assert.equal(credential.sub, DEV_TOKEN_SUB);
});

test("the operator's own token is read for its subject; anything else is not a credential", async () => {
  const token = (await developmentCredential()).token;
  const own = ownCredential(`Bearer ${token}`);
  assert.equal(own?.sub, decodeJwt(token).sub);
  assert.equal(own?.token, token, 'the Bearer prefix is dropped');
  assert.equal(own?.kind, 'own');
  assert.equal(ownCredential('not a token'), undefined);
  assert.equal(ownCredential('a.b.c'), undefined);
  const noSub = `${Buffer.from('{"alg":"HS256"}').toString('base64url')}.${Buffer.from('{"scope":"mesh:invoke"}').toString('base64url')}.sig`;
  assert.equal(ownCredential(noSub), undefined);
});

const tool: McpTool = {
  name: 'example',
  inputSchema: {
    required: ['capability', 'skills'],
    properties: {
      capability: { type: 'string', description: 'The skill.' },
      protocol: { type: 'string', enum: ['a', 'b'] },
      limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
      skills: { type: 'array', items: { type: 'string' } },
      federated: { type: 'boolean' },
      endpoint_url: { type: 'string', format: 'uri' },
    },
  },
};

test("a tool's form follows its schema: enum a select, integer a number, array a list, boolean a checkbox, uri a URL", () => {
  const fields = fieldsOf(tool);
  assert.deepEqual(
    fields.map((field) => [field.name, field.kind, field.required]),
    [['capability', 'text', true], ['protocol', 'select', false], ['limit', 'number', false], ['skills', 'list', true], ['federated', 'check', false], ['endpoint_url', 'text', false]],
  );
  assert.deepEqual(fields[1]?.kind === 'select' ? fields[1].options : [], ['a', 'b']);
  assert.equal(fields[5]?.kind === 'text' ? fields[5].inputType : '', 'url');
  assert.deepEqual(fieldsOf({ name: 'bare', inputSchema: {} }), []);
});

test('what the form sent becomes arguments: empty left out, numbers as numbers, lists split, a checkbox true', () => {
  assert.deepEqual(argumentsOf(tool, { capability: ' triage.assess ', protocol: '', limit: '5', skills: 'a.b\nc.d, e.f\n', federated: 'true', endpoint_url: '', _csrf: 'x' }), {
    capability: 'triage.assess',
    limit: 5,
    skills: ['a.b', 'c.d', 'e.f'],
    federated: true,
  });
  // What is not a number is passed on as typed, for the MCP server to refuse with its own message.
  assert.deepEqual(argumentsOf(tool, { capability: 'x', limit: 'many', skills: 'a' }), { capability: 'x', limit: 'many', skills: ['a'] });
});
