/**
 * The one request-id policy of every Ward server (the registry, the gateway, the agents): a
 * well-formed incoming `X-Request-Id` is kept, so one id follows a request through the client's, the
 * gateway's and the agent's logs; anything else gets a fresh UUID.
 */
import { randomUUID } from 'node:crypto';
import { scanTextForPhi } from '../phi/index.ts';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

// The ids servers make and pass on (the gateway to its agents): no PHI detector can read one as an identifier.
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Honours a well-formed incoming X-Request-Id; else a UUID. A caller's id is echoed and logged: never one that carries health data. */
export function requestIdFor(headers: Record<string, unknown>): string {
  const incoming = headers['x-request-id'];
  if (typeof incoming !== 'string') return randomUUID();
  if (UUID.test(incoming)) return incoming;
  return REQUEST_ID.test(incoming) && scanTextForPhi(incoming).length === 0 ? incoming : randomUUID();
}
