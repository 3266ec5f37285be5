import type { EventHub } from '../events/event-hub.ts';
import type { Storage } from '../storage/database.ts';

/**
 * What the registry's plugins opened while it was being built, so a build that fails part-way closes
 * them: the event hub, and the storage when the registry opened it itself (a storage passed in stays
 * its owner's).
 */
export type OpenedResources = { storage?: Storage; ownsStorage?: boolean; eventHub?: EventHub };

/** Closes what a failed build opened: the event hub, then the storage it owns. */
export async function closeOpened(opened: OpenedResources): Promise<void> {
  await opened.eventHub?.close();
  if (opened.ownsStorage) await opened.storage?.close();
}
