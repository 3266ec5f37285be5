/**
 * What a Device or Endpoint search says beside its matches: a warning when its `organization` names
 * no Organization of this registry (FHIR servers answer an unknown reference with an OperationOutcome
 * entry, not a silent empty Bundle), and the exact `total` of an Endpoint search the store can count
 * (the agents' `endpoint_count` summed, as a Device search counts agents).
 */
import type { Storage } from '../storage/database.ts';
import { listOwnerPage } from '../agents/index.ts';
import { organizationId, readOrganizationId } from './fhir-resources.ts';
import { single, type SearchRequest } from './search-parameters.ts';

type Db = Storage['db'];

export { countEndpoints } from '../agents/index.ts';

/** The `organization` reference of a search as given (`Organization/<id>`, `<id>` or a URL ending so). */
function organizationReference(request: SearchRequest): string | undefined {
  return single(request.strings.get('organization') ?? request.tokens.get('organization')?.map((group) => group.map((token) => token.code)), 'organization');
}

const hasOwner = async (db: Db, orgId: string) => (await listOwnerPage(db, { orgId }, { limit: 1 })).length > 0;

/**
 * Warnings for a search whose `organization` is not an Organization here: an id that is not in the
 * escaped form (with the escaped spelling when that owner exists), or one no agent is owned by.
 */
export async function organizationWarnings(db: Db, request: SearchRequest): Promise<string[]> {
  const reference = organizationReference(request);
  if (reference === undefined) return [];
  const id = reference.split('/').at(-1) ?? '';
  const read = readOrganizationId(id);
  if (read !== undefined && 'digest' in read) return [];
  if (read !== undefined && (await hasOwner(db, read.orgId))) return [];
  const escaping = "Organization ids are the owner's org_id with '-' written '--', '_' '-u' and ':' '-c'";
  const escaped = read === undefined && id !== '' ? organizationId(id) : undefined;
  const suggestion = escaped !== undefined && escaped !== id && (await hasOwner(db, id)) ? ` (org_id ${id} is Organization/${escaped})` : '';
  const what = read === undefined ? `${id.slice(0, 80)} is not an Organization id` : `there is no Organization/${id.slice(0, 80)} here`;
  return [`No matches: ${what}. ${escaping}${suggestion}; GET /fhir/Organization lists them.`];
}
