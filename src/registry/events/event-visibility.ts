/**
 * Who may read which events (docs/api.md, "Events"; issue 48): events about an organisation's API
 * keys (`api_key.*`) go only to that organisation's credentials and to administrators, as the key
 * list itself is admin-only; every other event goes to every caller the stream admits. The stream
 * applies it to each event (`isEventVisible`), the history in its query (`EventAudience`).
 */
import type { CallContext } from '../../core/call-context.ts';
import { EVENT_TYPES } from '../../contract/event-types.ts';

/** Event types only their organisation and administrators read. */
export const ORGANISATION_EVENT_TYPES: readonly string[] = EVENT_TYPES.filter((type) => type.startsWith('api_key.'));

/** The reader an event must suit: an administrator sees everything; anyone else, what is public and their organisation's own. */
export type EventAudience = { readonly admin: boolean; readonly orgId: string | undefined };

export function eventAudienceOf(ctx: CallContext): EventAudience {
  return { admin: ctx.scopes.has('registry:admin'), orgId: ctx.principal.orgId };
}

/** Whether `audience` may read `event`. An organisation's event names its `org_id` in its data. */
export function isEventVisible(audience: EventAudience, event: { type: string; data: Record<string, unknown> }): boolean {
  if (audience.admin || !ORGANISATION_EVENT_TYPES.includes(event.type)) return true;
  return audience.orgId !== undefined && event.data.org_id === audience.orgId;
}
