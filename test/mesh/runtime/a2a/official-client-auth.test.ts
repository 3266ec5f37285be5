/**
 * The official A2A JavaScript client (@a2a-js/sdk, A2A 1.0 as shipped) and the agent's authentication:
 * without a credential it gets HTTP 401 with a challenge, which its authentication hook is called with,
 * and an error that is not one of A2A's task errors (before, -32001 made it throw TaskNotFoundError);
 * a hook that answers the 401 with the mesh's credentials gets through; with credentials from the
 * start it sends, fetches, lists and streams.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { TaskState } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, createAuthenticatingFetchWithRetry, type Client } from '@a2a-js/sdk/client';
import { TaskNotFoundError } from '@a2a-js/sdk/errors';
import { createEchoAgent } from '../../fixtures/echo-agent.ts';
import { CALLER, listenAgent, token } from '../../helpers.ts';
import { a2aUserMessage, officialA2aClient } from './official-client.ts';

async function meshHeaders(): Promise<Record<string, string>> {
  return { authorization: `Bearer ${await token()}`, 'x-agent-id': CALLER };
}

/** The SDK's client with an authentication hook that has no credential until a 401 asks for one. */
async function clientAnswering401(url: string, seen: { status: number; challenge: string | null }[], credentials?: Record<string, string>): Promise<Client> {
  const fetchImpl = createAuthenticatingFetchWithRetry(fetch, {
    headers: async () => ({}),
    shouldRetryWithHeaders: async (_request, response) => {
      if (response.status !== 401) return undefined;
      seen.push({ status: response.status, challenge: response.headers.get('www-authenticate') });
      return credentials;
    },
  });
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory({ fetchImpl })] }));
  return factory.createFromUrl(url);
}

describe('official @a2a-js/sdk client and authentication (A2A 1.0)', () => {
  test('without a credential: HTTP 401 with a Bearer challenge reaches its auth hook, and the error is not TaskNotFoundError', async (t) => {
    const { url } = await listenAgent(t, createEchoAgent());
    const seen: { status: number; challenge: string | null }[] = [];
    const client = await clientAnswering401(url, seen);
    const refused = await client.sendMessage(a2aUserMessage({ text: 'hello' })).then(
      () => assert.fail('sent without a credential'),
      (error: unknown) => error,
    );
    assert.ok(!(refused instanceof TaskNotFoundError), 'an authentication failure must not read as a missing task');
    assert.equal((refused as { envelopeCode?: number }).envelopeCode, -32000);
    assert.match((refused as Error).message, /Authentication required/);
    assert.deepEqual((refused as { data?: unknown }).data, { reason: 'missing_token' });
    assert.equal(seen.length, 1);
    assert.match(seen[0]?.challenge ?? '', /^Bearer /);
  });

  test('a hook that answers the 401 with the mesh credentials gets through', async (t) => {
    const { url } = await listenAgent(t, createEchoAgent());
    const seen: { status: number; challenge: string | null }[] = [];
    const client = await clientAnswering401(url, seen, await meshHeaders());
    const task: any = await client.sendMessage(a2aUserMessage({ text: 'after the challenge' }));
    assert.equal(task.status.state, TaskState.TASK_STATE_COMPLETED);
    assert.equal(seen.length, 1);
  });

  test('with a credential it sends, fetches, lists and streams', async (t) => {
    const { url } = await listenAgent(t, createEchoAgent());
    const client = await officialA2aClient(url, await meshHeaders());
    const sent: any = await client.sendMessage(a2aUserMessage({ text: 'one' }));
    assert.equal(sent.status.state, TaskState.TASK_STATE_COMPLETED);
    const fetched: any = await client.getTask({ id: sent.id, tenant: '' } as any);
    assert.equal(fetched.id, sent.id);
    const kinds: string[] = [];
    for await (const event of client.sendMessageStream(a2aUserMessage({ text: 'two' }))) kinds.push((event as any).payload.$case);
    assert.equal(kinds[0], 'task');
    assert.equal(kinds.at(-1), 'statusUpdate');
    const listed: any = await client.listTasks({ tenant: '', contextId: '', status: TaskState.TASK_STATE_UNSPECIFIED, pageSize: 10, pageToken: '', includeArtifacts: true } as any);
    assert.equal(listed.totalSize, 2);
    assert.equal(listed.tasks.length, 2);
    assert.equal(listed.tasks[1].id, sent.id);
    assert.equal(listed.tasks[1].artifacts[0].parts[0].content.value, 'one');
    assert.equal(listed.nextPageToken, '');
    // The card says extendedAgentCard: the SDK fetches it with GetExtendedAgentCard, authenticated.
    const card: any = await client.getAgentCard();
    assert.equal(card.name, 'Echo test agent');
    assert.equal(card.capabilities.extendedAgentCard, true);
  });
});
