/**
 * An agent's history as FHIR `Provenance`, from the transparency ledger (docs/fhir.md, "Provenance"):
 * one resource per ledgered change of the agent (registered, updated, suspended, reinstated, retired,
 * revoked, trust validated or failed), with its time, what was done, the registry that recorded it,
 * and the ledger leaf (index and hash) as the entity, so a FHIR consumer can check each one with
 * `ward ledger verify --leaf <index>`. The registry's signed tree head at the time of the answer is
 * the signature: every leaf it lists is in that tree.
 *
 * The ledger keeps identifiers, states and digests, never free text (core/ledger-entry.ts), so a
 * Provenance holds no more than the ledger already publishes.
 */
import type { SignedTreeHead } from '../ledger/index.ts';
import { URI_IDENTIFIER_SYSTEM, WARD_CODE_SYSTEMS } from '../../contract/fhir-vocabulary.ts';
import type { LedgerLeaf } from '../storage/stores/ledger-store.ts';
import type { FhirResource } from './fhir-resources.ts';

const DATA_OPERATION = 'http://terminology.hl7.org/CodeSystem/v3-DataOperation';

/** The HL7 data operation of each agent event (v3 DataOperation); the Ward event type is coded beside it. */
const OPERATIONS: Readonly<Record<string, { code: string; display: string }>> = {
  'agent.registered': { code: 'CREATE', display: 'create' },
  'agent.updated': { code: 'UPDATE', display: 'revise' },
  'agent.suspended': { code: 'SUSPEND', display: 'suspend' },
  'agent.reinstated': { code: 'RESUME', display: 'resume' },
  'agent.retired': { code: 'OBSOLETE', display: 'obsolete' },
  'agent.revoked': { code: 'NULLIFY', display: 'nullify' },
  'agent.trust_validated': { code: 'UPDATE', display: 'revise' },
  'agent.trust_failed': { code: 'UPDATE', display: 'revise' },
};

type Entry = { seq: number; type: string; subject: string; occurred_at: string; data: Record<string, unknown> };

export const provenanceId = (leafIndex: number) => `leaf-${leafIndex}`;

/** The leaf index a Provenance id stands for, if it is one. */
export function readProvenanceId(id: string): number | undefined {
  const match = /^leaf-(0|[1-9]\d{0,15})$/.exec(id);
  return match ? Number(match[1]) : undefined;
}

export type ProvenanceContext = {
  /** The Device the leaf's subject is (`Device/<ULID>`). */
  target: string;
  registryId: string;
  /** Where the ledger's entries are served: the system of the leaf-index identifier. */
  entriesUrl: string;
  treeHead: SignedTreeHead;
};

/**
 * The ledger's signed tree head as a Provenance signature: a FHIR consumer checks the leaves the
 * Provenance names against it (`ward ledger verify`).
 */
export function treeHeadSignature(treeHead: SignedTreeHead, registry: unknown) {
  return {
    type: [{ system: 'urn:iso-astm:E1762-95:2013', code: '1.2.840.10065.1.12.1.5', display: 'Verification Signature' }],
    when: treeHead.timestamp,
    who: registry,
    targetFormat: 'application/json',
    sigFormat: 'application/jose',
    data: Buffer.from(treeHead.signature, 'utf8').toString('base64'),
  };
}

export function provenanceOf(leaf: LedgerLeaf, context: ProvenanceContext): FhirResource {
  const entry = JSON.parse(leaf.entry) as Entry;
  const operation = OPERATIONS[entry.type] ?? { code: 'UPDATE', display: 'revise' };
  const registry = { identifier: { system: URI_IDENTIFIER_SYSTEM, value: context.registryId }, display: `Ward registry ${context.registryId}` };
  return {
    resourceType: 'Provenance',
    id: provenanceId(leaf.leafIndex),
    target: [{ reference: context.target }],
    recorded: entry.occurred_at,
    activity: {
      coding: [
        { system: DATA_OPERATION, code: operation.code, display: operation.display },
        { system: WARD_CODE_SYSTEMS.eventType, code: entry.type },
      ],
    },
    agent: [{ type: { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/provenance-participant-type', code: 'custodian', display: 'Custodian' }] }, who: registry }],
    entity: [
      {
        role: 'source',
        what: {
          identifier: { system: context.entriesUrl, value: String(leaf.leafIndex) },
          display: `transparency ledger leaf ${leaf.leafIndex} (event ${entry.seq}), leaf hash ${leaf.leafHash}`,
        },
      },
    ],
    signature: [treeHeadSignature(context.treeHead, registry)],
  };
}
