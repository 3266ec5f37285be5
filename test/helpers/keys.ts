import type { TestRegistry } from './registry.ts';

export const KEYS = '/v1/admin/billing/api-keys';

/** Creates an API key through the API (anonymous admin in disabled mode) and returns the answer. */
export async function createKey(registry: TestRegistry, body: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
  const response = await registry.call({ method: 'POST', url: KEYS, headers, payload: { org_id: 'org-a', display_name: 'CI key', ...body } });
  if (response.status !== 201) throw new Error(`key creation failed: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body;
}

export const bearer = (rawKey: string) => ({ authorization: `Bearer ${rawKey}` });
