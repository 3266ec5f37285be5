/**
 * The words of Ward's FHIR R4 directory (docs/fhir.md): the code systems and identifier systems its
 * resources use, and how Ward's protocols are coded as `Endpoint.connectionType`. The registry writes
 * resources with them and clients search with them, so they are part of the wire contract.
 *
 * Ward's own code systems are named by URN: they must compare equal across every Ward registry, and
 * Ward owns no web address that could publish them. Each registry also serves them as `CodeSystem`
 * resources under its own `/fhir/CodeSystem/<id>`. Where HL7 already has a code (the FHIR REST and
 * HL7 v2 MLLP connection types, the payload type "any") Ward uses HL7's.
 */
export const FHIR_VERSION = '4.0.1';
export const FHIR_JSON = 'application/fhir+json';

/** An identifier whose value is a URI: the registry URIs of agents (RFC 3986; FHIR's own system for it). */
export const URI_IDENTIFIER_SYSTEM = 'urn:ietf:rfc:3986';

/**
 * An identifier whose value is `sha256:<hex>` of an address, as the transparency ledger records
 * addresses (never the address itself): the target of a computer-use run's Provenance.
 */
export const URL_DIGEST_IDENTIFIER_SYSTEM = 'urn:ward:fhir:NamingSystem:url-sha256';

export const WARD_CODE_SYSTEMS = {
  /** Connection types HL7 has no code for (e.g. `mesh-a2a-jsonrpc`): the protocol name as registered. */
  connectionType: 'urn:ward:fhir:CodeSystem:connection-type',
  /** What kind of device an agent is: `ai-agent`. */
  deviceType: 'urn:ward:fhir:CodeSystem:device-type',
  /** The names of `Device.property`: skill, protocol, feature, trust-level, … */
  deviceProperty: 'urn:ward:fhir:CodeSystem:device-property',
  /** An agent's skills, as discovery matches them (`consent.verify`). */
  skill: 'urn:ward:fhir:CodeSystem:skill',
  /** Ward's record statuses (active, suspended, revoked, retired) and trust states. */
  recordStatus: 'urn:ward:fhir:CodeSystem:record-status',
  /** The Ward event type a `Provenance` records (`agent.suspended`, …; docs/api.md). */
  eventType: 'urn:ward:fhir:CodeSystem:event-type',
  /** The Ward error code of an `OperationOutcome` issue (docs/errors.md). */
  errorCode: 'urn:ward:fhir:CodeSystem:error-code',
} as const;

export const HL7_CONNECTION_TYPE = 'http://terminology.hl7.org/CodeSystem/endpoint-connection-type';
export const HL7_PAYLOAD_TYPE = 'http://terminology.hl7.org/CodeSystem/endpoint-payload-type';

/** Ward protocol → the HL7 connection-type code where HL7 has one. */
const HL7_CONNECTION_CODES: Readonly<Record<string, string>> = { 'fhir-rest': 'hl7-fhir-rest', 'hl7v2-mllp': 'hl7v2-mllp' };

/** `Endpoint.connectionType` for an endpoint of `protocol`. */
export function connectionTypeOf(protocol: string): { system: string; code: string } {
  const hl7 = HL7_CONNECTION_CODES[protocol];
  return hl7 ? { system: HL7_CONNECTION_TYPE, code: hl7 } : { system: WARD_CODE_SYSTEMS.connectionType, code: protocol };
}

export const DEVICE_TYPE_AI_AGENT = { system: WARD_CODE_SYSTEMS.deviceType, code: 'ai-agent', display: 'AI agent' } as const;

/** `Endpoint.extension` holding the endpoint's region (`valueString`), where the record names one. */
export const ENDPOINT_REGION_EXTENSION = 'urn:ward:fhir:StructureDefinition:endpoint-region';

/**
 * The Ward protocols an `Endpoint.connectionType` token can stand for (the inverse of
 * {@link connectionTypeOf}): with HL7's system, the protocol of its code; with Ward's, the code; with
 * none, either. A superset where a code is both: the search checks each Endpoint exactly.
 */
export function protocolsForConnectionType(token: { system?: string | undefined; code: string }): string[] {
  const fromHl7 = Object.entries(HL7_CONNECTION_CODES).filter(([, code]) => code === token.code).map(([protocol]) => protocol);
  if (token.system === HL7_CONNECTION_TYPE) return fromHl7;
  if (token.system === WARD_CODE_SYSTEMS.connectionType) return [token.code];
  if (token.system !== undefined && token.system !== '') return [];
  return [...new Set([token.code, ...fromHl7])];
}
