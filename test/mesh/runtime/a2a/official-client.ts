/**
 * The official A2A JavaScript client as a deployment would set it up: the SDK's defaults (A2A 1.0,
 * the card at `<url>/.well-known/agent-card.json`, transport chosen from the card), plus the one thing
 * every deployment adds, its authentication hook. The card is fetched without it (cards are public).
 */
import { randomUUID } from 'node:crypto';
import { Role } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, createAuthenticatingFetchWithRetry, type Client } from '@a2a-js/sdk/client';

export async function officialA2aClient(url: string, headers: Record<string, string>): Promise<Client> {
  const fetchImpl = createAuthenticatingFetchWithRetry(fetch, { headers: async () => headers, shouldRetryWithHeaders: async () => undefined });
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory({ fetchImpl })] }));
  return factory.createFromUrl(url);
}

/** A 1.0 user message with one part (`text` or a `data` object), optionally continuing `taskId`. */
export function a2aUserMessage(part: { text: string } | { data: Record<string, unknown> }, taskId = ''): any {
  const content = 'text' in part ? { $case: 'text', value: part.text } : { $case: 'data', value: part.data };
  return { message: { messageId: randomUUID(), role: Role.ROLE_USER, parts: [{ content, metadata: undefined, filename: '', mediaType: '' }], taskId, contextId: '', metadata: undefined, extensions: [], referenceTaskIds: [] } };
}
