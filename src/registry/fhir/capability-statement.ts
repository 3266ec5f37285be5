/**
 * `GET /fhir/metadata`: what the FHIR directory does, exactly (FHIR R4 §2.40): read and search of
 * Device, Endpoint and Organization with the parameters of search-parameters.ts, vread and history of
 * Device, Provenance by target, JSON only.
 */
import { FHIR_JSON, FHIR_VERSION } from '../../contract/fhir-vocabulary.ts';
import { INCLUDES, REVINCLUDES, SEARCH_PARAMETERS, type ResourceType } from './search-parameters.ts';

const PROFILES: Record<ResourceType, string> = {
  Device: 'http://hl7.org/fhir/StructureDefinition/Device',
  Endpoint: 'http://hl7.org/fhir/StructureDefinition/Endpoint',
  Organization: 'http://hl7.org/fhir/StructureDefinition/Organization',
  Provenance: 'http://hl7.org/fhir/StructureDefinition/Provenance',
};

const PARAMETER_DEFINITIONS: Record<string, string> = {
  _id: 'http://hl7.org/fhir/SearchParameter/Resource-id',
  _lastUpdated: 'http://hl7.org/fhir/SearchParameter/Resource-lastUpdated',
  identifier: 'http://hl7.org/fhir/SearchParameter/{type}-identifier',
  status: 'http://hl7.org/fhir/SearchParameter/{type}-status',
  organization: 'http://hl7.org/fhir/SearchParameter/{type}-organization',
  name: 'http://hl7.org/fhir/SearchParameter/{type}-name',
  'device-name': 'http://hl7.org/fhir/SearchParameter/Device-device-name',
  type: 'http://hl7.org/fhir/SearchParameter/Device-type',
  'connection-type': 'http://hl7.org/fhir/SearchParameter/Endpoint-connection-type',
  target: 'http://hl7.org/fhir/SearchParameter/Provenance-target',
};

export function capabilityStatement(options: { baseUrl: string; software: { name: string; version: string }; date: string }) {
  return {
    resourceType: 'CapabilityStatement',
    status: 'active',
    date: options.date,
    publisher: 'Ward',
    kind: 'instance',
    software: options.software,
    implementation: { description: 'Ward agent registry: AI agents as Device, their endpoints as Endpoint, their owners as Organization, their history as Provenance', url: `${options.baseUrl}/fhir` },
    fhirVersion: FHIR_VERSION,
    format: [FHIR_JSON, 'json'],
    rest: [
      {
        mode: 'server',
        documentation: 'Read-only. The same credentials and scopes as the registry API (registry:read); this statement needs none.',
        resource: (Object.keys(SEARCH_PARAMETERS) as ResourceType[]).map((type) => ({
          type,
          profile: PROFILES[type],
          interaction: type === 'Device' ? [{ code: 'read' }, { code: 'vread' }, { code: 'history-instance', documentation: 'Every kept version, newest first; _count (1 to 100), _since (an instant) and next links.' }, { code: 'search-type' }] : [{ code: 'read' }, { code: 'search-type' }],
          // Devices and Endpoints carry the record's version; only a Device's earlier versions can be read.
          versioning: type === 'Device' || type === 'Endpoint' ? 'versioned' : 'no-version',
          readHistory: type === 'Device',
          conditionalRead: 'not-supported',
          ...(INCLUDES[type].length > 0 ? { searchInclude: [...INCLUDES[type]] } : {}),
          ...(REVINCLUDES[type].length > 0 ? { searchRevInclude: [...REVINCLUDES[type]] } : {}),
          searchParam: SEARCH_PARAMETERS[type].map((parameter) => ({
            name: parameter.name,
            ...(PARAMETER_DEFINITIONS[parameter.name] ? { definition: (PARAMETER_DEFINITIONS[parameter.name] as string).replace('{type}', type) } : {}),
            type: parameter.type,
            documentation: parameter.documentation,
          })),
        })),
        searchParam: [
          { name: '_count', type: 'number', documentation: 'Page size, 1 to 100 (default 20).' },
          { name: '_summary', type: 'token', documentation: 'count: the total alone, no entries.' },
          { name: '_page_token', type: 'string', documentation: "Where a page starts: only as the server writes it in a Bundle's next link." },
        ],
      },
    ],
  };
}
