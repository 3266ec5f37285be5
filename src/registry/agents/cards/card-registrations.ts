/**
 * Agents registered from their A2A card (docs/mesh.md, "Signed cards"): `POST /v1/agents/from-card`
 * reads the card (card-reader.ts) before the write unit opens, then registers the record it maps to
 * (card-mapping.ts) and remembers the card's URL, in one unit, at most once per idempotency key. A
 * refusal leaves nothing written. On a schedule each registered card is read again: a card that maps
 * to something else updates the record (`agent.updated`, as any update does); one that no longer
 * reads or verifies suspends the agent with the reason (`agent.suspended`).
 */
import { randomUUID } from 'node:crypto';
import { systemContext } from '../../../core/call-context.ts';
import type { Clock } from '../../../core/clock.ts';
import { isWardError } from '../../../core/errors.ts';
import type { AgentRecord } from '../../../contract/agent-record.ts';
import { recordHeaders, type AgentService } from '../agent-service.ts';
import { writeOnce, type IdempotentOutcome, type WriteRequest } from '../../storage/idempotency.ts';
import type { Storage } from '../../storage/database.ts';
import { acquireLease, releaseLease } from '../../storage/stores/lease-store.ts';
import { insertAgentCard, listCardsToReread, recordCardReading, type AgentCardRow } from '../storage/agent-card-store.ts';
import { runWrite } from '../../storage/write-unit.ts';
import { agentInputFromCard, cardContentDigest, type CardRegistration } from './card-mapping.ts';
import type { CardReader, CardReading } from './card-reader.ts';
import { cardOwner } from './card-owner.ts';

export type FromCardBody = CardRegistration & { card_url: string; jurisdiction: string };

/** Where a record registered from a card came from, as the 201 answer says. */
export type CardSource = { kind: 'a2a-agent-card'; card_url: string; signed_by: { kid: string; jku: string | null } | null; read_at: string };

export type CardRegistrationsDeps = {
  storage: Storage;
  clock: Clock;
  agents: AgentService;
  readCard: CardReader;
  /** Time between re-read rounds; 0: none. */
  intervalMs: number;
  log: (error: unknown, message: string) => void;
};

/** What one re-read round did. */
export type RereadRound = { read: number; updated: number; suspended: number; failed: number };

/** Cards read per round at most (the oldest readings first), so a round stays bounded. */
const ROUND_SIZE = 500;
/** Cards read at once within a round. */
const CONCURRENCY = 4;
const LEASE = 'card-reread';
/** `agent_cards.last_error` of a re-read whose write lost a race with the owner's: not a failure of the card. */
const LOST_RACE = 'agent card re-read lost a write race: ';
const CHANGED_WHILE_SUSPENDED = 'changed while suspended';
/** How long past the interval the lease outlives its last renewal (a round delayed, a slow database). */
const LEASE_MARGIN_MS = 60_000;

/** One card read again: updated when it maps to something new, the agent suspended when it fails. */
async function reread(deps: CardRegistrationsDeps, row: AgentCardRow & { status: string }, stop: AbortSignal): Promise<'same' | 'updated' | 'suspended' | 'failed'> {
  const { storage, clock, agents } = deps;
  const at = clock.now().toISOString();
  const ctx = systemContext(clock, 'card-reread');
  try {
    const current: AgentRecord = await agents.get(row.agent_id);
    const reading = await deps.readCard(row.card_url, stop);
    const input = agentInputFromCard(reading.card, { owner: current.owner, policy_tags: current.policy_tags });
    const digest = cardContentDigest(input);
    const signedBy = reading.signedBy?.kid ?? null;
    if (digest === row.content_digest) {
      await recordCardReading(storage.db, row.agent_id, { read_at: at, last_error: null, signed_by: signedBy });
      return 'same';
    }
    if (current.status !== 'active') {
      // A suspended agent's record stays as it was suspended; its card is kept being read.
      await recordCardReading(storage.db, row.agent_id, { read_at: at, last_error: CHANGED_WHILE_SUSPENDED });
      return 'same';
    }
    await runWrite(storage, async (unit) => {
      await agents.update(unit, ctx, row.agent_id, current.version, { ...input, trust: current.trust });
      await recordCardReading(unit.tx, row.agent_id, { read_at: at, last_error: null, content_digest: digest, signed_by: signedBy });
    });
    return 'updated';
  } catch (error) {
    // A read cut short because the registry is stopping says nothing about the card: nothing recorded.
    if (stop.aborted) throw error;
    // The card's fault: a CARD_* refusal, or content that would carry PHI into the record.
    const cardsFault = isWardError(error) && (error.code.startsWith('CARD_') || error.code === 'PHI_DETECTED');
    if (!cardsFault) {
      const detail = `${(error as Error | null)?.name ?? 'Error'}: ${(error as Error | null)?.message ?? String(error)}`;
      if (isWardError(error) && error.code === 'VERSION_CONFLICT') {
        // Not the card's fault (the owner changed the record while it was read): no suspension, but the
        // reading is recorded, so this card goes to the back of the queue and cannot hold the front of every round.
        await recordCardReading(storage.db, row.agent_id, { read_at: at, last_error: `${LOST_RACE}${detail}`.slice(0, 1000) }).catch(() => undefined);
        throw error;
      }
      // Any other failure is recorded; one that follows a failed reading (a card that keeps failing, for
      // whatever reason) suspends as a CARD_* refusal does (docs/mesh.md, "Re-reads").
      const note = `agent card re-read failed: ${detail}`.slice(0, 1000);
      const keepsFailing = row.last_error !== null && !row.last_error.startsWith(LOST_RACE) && row.last_error !== CHANGED_WHILE_SUSPENDED;
      if (!keepsFailing || row.status !== 'active') {
        await recordCardReading(storage.db, row.agent_id, { read_at: at, last_error: note }).catch(() => undefined);
        throw error;
      }
      await runWrite(storage, async (unit) => {
        await agents.changeStatus(unit, ctx, row.agent_id, 'suspend', `agent card re-read failed twice in a row: ${detail}`.slice(0, 1000));
        await recordCardReading(unit.tx, row.agent_id, { read_at: at, last_error: note });
      });
      return 'suspended';
    }
    const reason = `agent card re-read failed: ${error.code}: ${error.message}`.slice(0, 1000);
    const suspend = row.status === 'active';
    await runWrite(storage, async (unit) => {
      if (suspend) await agents.changeStatus(unit, ctx, row.agent_id, 'suspend', reason);
      await recordCardReading(unit.tx, row.agent_id, { read_at: at, last_error: reason });
    });
    return suspend ? 'suspended' : 'failed';
  }
}

const sourceOf = (reading: CardReading, at: string): CardSource => ({
  kind: 'a2a-agent-card',
  card_url: reading.cardUrl,
  signed_by: reading.signedBy ? { kid: reading.signedBy.kid, jku: reading.signedBy.jku ?? null } : null,
  read_at: at,
});

export function createCardRegistrations(deps: CardRegistrationsDeps) {
  const { storage, clock, agents } = deps;
  const holder = randomUUID();
  /** Aborted by stop(): reads in flight end at once, no new card is taken. */
  const stopping = new AbortController();

  /**
   * One round, by the instance holding the lease (the others read nothing: one reader suspends,
   * not every instance in turn), `CONCURRENCY` cards at a time.
   */
  async function runRound(): Promise<RereadRound> {
    const round: RereadRound = { read: 0, updated: 0, suspended: 0, failed: 0 };
    if (stopping.signal.aborted) return round;
    const now = clock.now();
    // Renewed every round; a holder that died without releasing it is replaced within an interval and a minute.
    const leaseMs = Math.max(deps.intervalMs, 60_000) + LEASE_MARGIN_MS;
    if (!(await acquireLease(storage.db, { name: LEASE, holder, now: now.toISOString(), expiresAt: new Date(now.getTime() + leaseMs).toISOString() }))) return round;
    const rows = await listCardsToReread(storage.db, ROUND_SIZE);
    let next = 0;
    const worker = async () => {
      while (next < rows.length && !stopping.signal.aborted) {
        const row = rows[next] as (typeof rows)[number];
        next += 1;
        round.read += 1;
        try {
          const outcome = await reread(deps, row, stopping.signal);
          if (outcome !== 'same') round[outcome] += 1;
        } catch (error) {
          // A write that lost a race (the owner changed the record meanwhile) is tried next round.
          round.failed += 1;
          if (!stopping.signal.aborted) deps.log(error, `re-reading the card of ${row.agent_id} failed`);
        }
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    return round;
  }

  /** Rounds in flight, the scheduled one or one a caller started: stop() waits for them all. */
  const inFlight = new Set<Promise<RereadRound>>();
  async function rereadAll(): Promise<RereadRound> {
    const round = runRound();
    inFlight.add(round);
    try {
      return await round;
    } finally {
      inFlight.delete(round);
    }
  }

  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;

  return {
    /** `POST /v1/agents/from-card`: the card read, then the record and its source; 201. */
    /** `stop`: the caller went away; the card read ends at once (CARD_UNREACHABLE, reason `aborted`). */
    async registerOnce(write: WriteRequest, body: FromCardBody, stop?: AbortSignal): Promise<IdempotentOutcome> {
      let reading: CardReading | undefined;
      let input: ReturnType<typeof agentInputFromCard> | undefined;
      return writeOnce(
        deps,
        write,
        async (unit) => {
          const read = reading as CardReading;
          const at = clock.now().toISOString();
          const record = await agents.register(unit, write.ctx, { ...(input as NonNullable<typeof input>), jurisdiction: body.jurisdiction });
          const id = record.agent_id.slice(record.agent_id.lastIndexOf('/') + 1);
          await insertAgentCard(unit.tx, {
            agent_id: id,
            card_url: read.cardUrl,
            content_digest: cardContentDigest(input as NonNullable<typeof input>),
            signed_by: read.signedBy?.kid ?? null,
            read_at: at,
            last_error: null,
          });
          return { status: 201, headers: { ...recordHeaders(record), location: `/v1/agents/${id}` }, body: { ...record, source: sourceOf(read, at) } };
        },
        async () => {
          // Network reads happen before the unit opens: no lock is held while a card server answers.
          reading = await deps.readCard(body.card_url, stop);
          const owner = cardOwner(write.ctx, body.owner, reading.cardUrl, reading.card);
          input = agentInputFromCard(reading.card, { ...body, ...(owner ? { owner } : {}) });
        },
      );
    },

    /** One round over the registered cards (the job runs it every `intervalMs`; tests call it). */
    rereadAll,

    start(): void {
      if (deps.intervalMs <= 0 || timer) return;
      timer = setInterval(() => {
        running ??= rereadAll()
          .catch((error: unknown) => deps.log(error, 'card re-read round failed'))
          .finally(() => (running = undefined));
      }, deps.intervalMs);
      timer.unref();
    },

    /** Ends the schedule and the round in flight (its reads aborted), then lets the lease go for the next holder. */
    async stop(): Promise<void> {
      clearInterval(timer);
      timer = undefined;
      stopping.abort();
      await Promise.allSettled([running, ...inFlight]);
      await releaseLease(storage.db, LEASE, holder).catch((error: unknown) => deps.log(error, 'releasing the card-reread lease failed'));
    },
  };
}

export type CardRegistrations = ReturnType<typeof createCardRegistrations>;
