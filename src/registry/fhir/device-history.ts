/**
 * An agent's record versions as FHIR (docs/fhir.md, "History"): `Device/{id}/_history` as a `history`
 * Bundle, newest first, and `Device/{id}/_history/{vid}` (vread), from the versions the registry keeps
 * with every write (migration 014). A version is the Device as it was: the record of that version,
 * under the agent's URI, jurisdiction and creation time (which never change).
 */
import { WardError } from '../../core/errors.ts';
import { toAgentRecord } from '../agents/index.ts';
import { decodeCursor, encodeCursor } from '../../contract/cursor.ts';
import type { Storage } from '../storage/database.ts';
import { findAgent, type AgentRow } from '../agents/index.ts';
import { countAgentVersions, findAgentVersion, listAgentVersions, type AgentVersion } from '../agents/index.ts';
import { deviceOf, type FhirResource } from './fhir-resources.ts';

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;
const PAGE_KIND = 'fhir-history';
const KNOWN = new Set(['_count', '_since', '_page_token', '_format', '_pretty']);

const badRequest = (parameter: string, reason: string) =>
  new WardError('BAD_REQUEST', `The history parameter ${parameter} ${reason}.`, { errors: [{ in: 'query', pointer: `/${parameter}`, reason }] });

const deviceOfVersion = (row: AgentRow, version: AgentVersion): FhirResource =>
  deviceOf(toAgentRecord({ ...row, version: version.version, status: version.status, record: version.record, updated_at: version.updatedAt }, []));

/** The agent row of a Device id, or undefined (an id that is no ULID, or no agent). */
async function agentOf(storage: Storage, id: string): Promise<AgentRow | undefined> {
  return ULID.test(id) ? findAgent(storage.db, id) : undefined;
}

/** `Device/{id}/_history/{vid}`: the Device as it was at that version; undefined when there is none. */
export async function readDeviceVersion(storage: Storage, id: string, vid: string): Promise<FhirResource | undefined> {
  const row = /^[1-9]\d{0,9}$/.test(vid) ? await agentOf(storage, id) : undefined;
  const version = row && (await findAgentVersion(storage.db, row.id, Number(vid)));
  return row && version ? deviceOfVersion(row, version) : undefined;
}

export type HistoryRequest = { count: number; since: string | undefined; beforeVersion: number | undefined; used: Array<[string, string]> };

/** The query of a history request: `_count` (1–100), `_since` (an instant), `_page_token`; others refused when strict. */
export function parseHistoryRequest(raw: Record<string, unknown>, strict: boolean): HistoryRequest {
  const request: HistoryRequest = { count: 20, since: undefined, beforeVersion: undefined, used: [] };
  for (const [name, value] of Object.entries(raw)) {
    if (!KNOWN.has(name)) {
      if (strict) throw badRequest(name, 'is not supported on a history (_count, _since and _page_token are)');
      continue;
    }
    if (Array.isArray(value)) throw badRequest(name, 'is given more than once');
    const text = String(value);
    if (name === '_count') {
      if (!/^\d{1,3}$/.test(text) || Number(text) < 1 || Number(text) > 100) throw badRequest(name, 'must be a whole number from 1 to 100');
      request.count = Number(text);
      request.used.push([name, text]);
    } else if (name === '_since') {
      const instant = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/.test(text) ? Date.parse(text) : Number.NaN;
      if (Number.isNaN(instant)) throw badRequest(name, 'must be an instant with its time zone (2026-03-01T00:00:00Z)');
      request.since = new Date(instant).toISOString();
      request.used.push([name, text]);
    } else if (name === '_page_token') {
      const position = (() => {
        try {
          return decodeCursor(text, PAGE_KIND);
        } catch {
          return '';
        }
      })();
      if (!/^[1-9]\d{0,9}$/.test(position)) throw badRequest(name, 'is not one this history issued');
      request.beforeVersion = Number(position);
    }
  }
  return request;
}

export type HistoryPage = { resources: FhirResource[]; next: string | undefined; total: number | undefined };

/** A page of the Device's versions, newest first (undefined: no such Device). `total` unless `_since` narrows it. */
export async function deviceHistory(storage: Storage, id: string, request: HistoryRequest): Promise<HistoryPage | undefined> {
  const row = await agentOf(storage, id);
  if (!row) return undefined;
  const versions = await listAgentVersions(storage.db, row.id, { limit: request.count + 1, ...(request.beforeVersion === undefined ? {} : { beforeVersion: request.beforeVersion }) });
  // Newest first, so the versions since an instant are a prefix: stop at the first older one.
  const older = request.since === undefined ? -1 : versions.findIndex((version) => version.updatedAt < (request.since as string));
  const kept = older < 0 ? versions : versions.slice(0, older);
  const page = kept.slice(0, request.count);
  const last = page.at(-1);
  return {
    resources: page.map((version) => deviceOfVersion(row, version)),
    next: kept.length > request.count && last ? encodeCursor(PAGE_KIND, String(last.version)) : undefined,
    total: request.since === undefined ? await countAgentVersions(storage.db, row.id) : undefined,
  };
}

/** A history Bundle's entry for a Device version: how it was written (POST for the first, PUT after) and its version. */
export function historyEntry(base: string, device: FhirResource) {
  const meta = device.meta as { versionId: string; lastUpdated: string };
  const created = meta.versionId === '1';
  return {
    fullUrl: `${base}/Device/${device.id}`,
    resource: device,
    request: { method: created ? 'POST' : 'PUT', url: created ? 'Device' : `Device/${device.id}` },
    response: { status: created ? '201' : '200', etag: `W/"${meta.versionId}"`, lastModified: meta.lastUpdated },
  };
}
