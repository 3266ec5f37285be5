/**
 * A computer-use run (docs/computer-use.md) as one FHIR `Provenance` (docs/fhir.md, "Computer-use
 * runs"): the model that acted as its performer, a `Device` contained in the Provenance; the registry
 * as custodian; the console page the run opened as its target (the digest of its address); and each of the run's ledger leaves as
 * an entity, so every action can be checked with `ward ledger verify --leaf`. Everything comes from the
 * run's ledger entries, which hold identifiers, states and digests (never the task's words, typed text
 * persona or addresses: those as digests), so the Provenance publishes no more than the ledger does.
 */
import { URI_IDENTIFIER_SYSTEM, URL_DIGEST_IDENTIFIER_SYSTEM, WARD_CODE_SYSTEMS } from '../../contract/fhir-vocabulary.ts';
import type { LedgerLeaf } from '../storage/stores/ledger-store.ts';
import type { FhirResource } from './fhir-resources.ts';
import { treeHeadSignature, type ProvenanceContext } from './provenance.ts';

type Entry = { seq: number; type: string; occurred_at: string; data: Record<string, unknown> };

/** How many of a run's leaves one Provenance lists as entities (a run of 50 turns of a few actions each stays well within). */
export const RUN_LEAVES_LISTED = 1000;

export const runProvenanceId = (sessionId: string) => `run-${sessionId}`;

/** The session id a run Provenance id stands for, if it is one. */
export function readRunProvenanceId(id: string): string | undefined {
  return /^run-[0-9A-HJKMNP-TV-Z]{26}$/.test(id) ? id.slice(4) : undefined;
}

const PARTICIPANT = 'http://terminology.hl7.org/CodeSystem/provenance-participant-type';

/** The run's Provenance from its leaves (oldest first, the `computer_use.requested` one first); undefined without that one. */
export function runProvenanceOf(sessionId: string, leaves: readonly LedgerLeaf[], context: Omit<ProvenanceContext, 'target'>): FhirResource | undefined {
  const entries = leaves.map((leaf) => ({ leaf, entry: JSON.parse(leaf.entry) as Entry }));
  const requested = entries.find(({ entry }) => entry.type === 'computer_use.requested')?.entry;
  if (!requested) return undefined;
  const started = entries.find(({ entry }) => entry.type === 'computer_use.started')?.entry;
  const ended = entries.find(({ entry }) => entry.type === 'computer_use.ended')?.entry;
  const model = typeof started?.data.model === 'string' ? started.data.model : undefined;
  // The ledger keeps the page's address as its digest (`sha256:<hex>`), and so does the Provenance.
  const urlDigest = String(requested.data.url ?? '');
  const status = typeof ended?.data.status === 'string' ? ended.data.status : started ? 'running' : 'queued';
  const registry = { identifier: { system: URI_IDENTIFIER_SYSTEM, value: context.registryId }, display: `Ward registry ${context.registryId}` };
  const device = {
    resourceType: 'Device',
    id: 'model',
    type: { coding: [{ system: WARD_CODE_SYSTEMS.deviceType, code: 'ai-model', display: 'AI model' }], text: 'AI model (computer use)' },
    ...(model
      ? { deviceName: [{ name: model, type: 'model-name' }] }
      : { note: [{ text: 'The run began before the registry recorded the model of each run, or has not started yet.' }] }),
  };
  return {
    resourceType: 'Provenance',
    id: runProvenanceId(sessionId),
    contained: [device],
    target: [{ identifier: { system: URL_DIGEST_IDENTIFIER_SYSTEM, value: urlDigest }, display: 'the console page the run opened (the SHA-256 of its address)' }],
    ...(started ? { occurredPeriod: { start: started.occurred_at, ...(ended ? { end: ended.occurred_at } : {}) } } : {}),
    recorded: (ended ?? entries.at(-1)?.entry ?? requested).occurred_at,
    activity: {
      coding: [{ system: WARD_CODE_SYSTEMS.eventType, code: 'computer_use.run', display: 'computer-use run' }],
      text: `computer-use run ${sessionId}: ${status}`,
    },
    agent: [
      { type: { coding: [{ system: PARTICIPANT, code: 'performer', display: 'Performer' }] }, who: { reference: '#model', display: model ?? 'AI model (not recorded)' } },
      { type: { coding: [{ system: PARTICIPANT, code: 'custodian', display: 'Custodian' }] }, who: registry },
    ],
    entity: entries.map(({ leaf, entry }) => ({
      role: 'source',
      what: {
        identifier: { system: context.entriesUrl, value: String(leaf.leafIndex) },
        display: `transparency ledger leaf ${leaf.leafIndex}: ${entry.type}${typeof entry.data.turn === 'number' ? ` (turn ${entry.data.turn})` : ''}, leaf hash ${leaf.leafHash}`,
      },
    })),
    signature: [treeHeadSignature(context.treeHead, registry)],
  };
}
