/**
 * The agent rows discovery reads, kept between answers. A row's content is fixed by its id and
 * version (every write of an agent moves its version; health readings live beside it and are read
 * per answer), so a kept row is good while its version is current. Whether it is, is checked with
 * one narrow query per slice (ids and versions, no documents), or not at all while nothing has been
 * committed since the row was last checked. An uncached answer then reads and parses only the
 * documents that changed, instead of 10–50 JSON documents of ~1.5 kB each (a third of its CPU).
 *
 * Across instances the "nothing committed" shortcut is as fresh as the instance's knowledge of the
 * event sequence (at most about a second behind, docs/discovery.md), and it is taken for at most 30 s
 * after a row was last checked, the answer cache's bound. The check compares `updated_at` as well as
 * the version, so a database restored under a running instance (versions that repeat) is not mistaken
 * for the one the rows came from.
 */
import type { Storage } from '../storage/database.ts';
import { agentVersions, findAgents, type AgentRow } from '../agents/index.ts';

/** How long a row checked at one event sequence is used without a query while the sequence holds. */
const SHORTCUT_MS = 30_000;

export type AgentRowsDeps = {
  db: Storage['db'];
  /** How many rows are kept (least recently used go first); 0 keeps none. */
  maxEntries: number;
  /** The sequence of the last change this instance knows is committed, on any instance. */
  committedSeq(): number;
  /** Milliseconds since the epoch (the registry's clock). */
  now(): number;
};

/** A kept row, and the event sequence and time at which it was last known current. */
type Kept = { row: AgentRow; checkedAt: number; checkedAtMs: number };

export function createAgentRows(deps: AgentRowsDeps) {
  const kept = new Map<string, Kept>();
  let hits = 0;
  let misses = 0;

  function keep(id: string, entry: Kept): void {
    if (deps.maxEntries === 0) return;
    kept.delete(id);
    kept.set(id, entry);
    while (kept.size > deps.maxEntries) kept.delete(kept.keys().next().value as string);
  }

  return {
    /** The rows of these agents in the order given (an id without an agent is left out). */
    async read(ids: readonly string[]): Promise<AgentRow[]> {
      // Taken before any query: a commit during the reads moves it, and the rows are checked again.
      const generation = deps.committedSeq();
      const now = deps.now();
      const found = new Map<string, AgentRow>();
      const toCheck: string[] = [];
      const toRead: string[] = [];
      for (const id of ids) {
        const entry = kept.get(id);
        if (entry === undefined) toRead.push(id);
        else if (entry.checkedAt === generation && now - entry.checkedAtMs <= SHORTCUT_MS) {
          found.set(id, entry.row);
          keep(id, entry); // re-inserted: the Map's order stays least recently used first
        } else toCheck.push(id);
      }
      if (toCheck.length > 0) {
        const versions = await agentVersions(deps.db, toCheck);
        for (const id of toCheck) {
          const entry = kept.get(id);
          const current = versions.get(id);
          if (entry !== undefined && current?.version === entry.row.version && current.updatedAt === entry.row.updated_at) {
            found.set(id, entry.row);
            keep(id, { row: entry.row, checkedAt: generation, checkedAtMs: now });
          } else if (current !== undefined) toRead.push(id);
          else kept.delete(id);
        }
      }
      hits += found.size;
      misses += toRead.length;
      for (const row of await findAgents(deps.db, toRead)) {
        found.set(row.id, row);
        keep(row.id, { row, checkedAt: generation, checkedAtMs: now });
      }
      return ids.flatMap((id) => found.get(id) ?? []);
    },
    /** Rows found kept and rows read since start, and how many are kept: the metrics (and so the bench) show them. */
    stats: () => ({ hits, misses, entries: kept.size }),
  };
}
