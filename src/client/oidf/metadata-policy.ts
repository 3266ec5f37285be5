/**
 * The subject's resolved metadata (OIDF §6.1.4): its entity configuration's metadata, overridden by
 * its immediate superior's statement's `metadata`, cut to the allowed entity types (OIDF §6.2.3), then
 * every superior's `metadata_policy` applied, the trust anchor's first. The standard operators are
 * applied in OIDF's order (value, add, default, one_of, subset_of, superset_of, essential); two
 * superiors giving a parameter different `value`s is a conflict (`invalid_metadata`), as is a value
 * a policy refuses. Applying the policies one after another checks what combining them would (OIDF
 * §6.1.4.1) for the operators Ward uses; operators this code does not know are ignored unless a
 * statement marks them critical (refused when validating the chain).
 */
import { isDeepStrictEqual } from 'node:util';
import { FEDERATION_ENTITY_TYPE, type EntityMetadata, type EntityStatementClaims } from '../../contract/openid-federation.ts';
import { OidfError } from './oidf-error.ts';
import { allowedEntityTypes } from './trust-chain-validation.ts';

const ORDER = ['value', 'add', 'default', 'one_of', 'subset_of', 'superset_of', 'essential'] as const;
type Operator = (typeof ORDER)[number];

const conflict = (message: string) => new OidfError('invalid_metadata', message);

/** The subject's metadata after the chain's metadata, constraints and policies (ES[0] … ES[i] as validated). */
export function resolveMetadata(statements: readonly EntityStatementClaims[]): EntityMetadata {
  const leaf = statements[0] as EntityStatementClaims;
  const metadata: EntityMetadata = structuredClone(leaf.metadata ?? {});
  const superior = statements.length > 2 ? statements[1] : undefined;
  for (const [type, values] of Object.entries(superior?.metadata ?? {})) {
    if (metadata[type]) metadata[type] = { ...metadata[type], ...structuredClone(values) };
  }
  const allowed = allowedEntityTypes(statements);
  for (const type of Object.keys(metadata)) if (allowed && !allowed.has(type) && type !== FEDERATION_ENTITY_TYPE) delete metadata[type];
  const fixed = new Map<string, unknown>();
  // The trust anchor's statement about its subordinate first, the subject's superior's last.
  for (const claims of statements.slice(1, -1).reverse()) {
    for (const [type, parameters] of Object.entries(claims.metadata_policy ?? {})) {
      const values = metadata[type];
      if (!values) continue;
      for (const [parameter, operators] of Object.entries(parameters)) applyOperators(values, parameter, operators, `${type}.${parameter}`, fixed);
    }
  }
  return metadata;
}

function applyOperators(values: Record<string, unknown>, parameter: string, operators: Record<string, unknown>, path: string, fixed: Map<string, unknown>): void {
  for (const operator of ORDER) {
    if (!(operator in operators)) continue;
    const argument = operators[operator];
    if (operator === 'value') {
      if (fixed.has(path) && !isDeepStrictEqual(fixed.get(path), argument)) throw conflict(`Two superiors fix ${path} to different values.`);
      fixed.set(path, argument);
    }
    applyOperator(values, parameter, operator, argument, path);
  }
}

function applyOperator(values: Record<string, unknown>, parameter: string, operator: Operator, argument: unknown, path: string): void {
  const current = values[parameter];
  const list = (what: unknown): unknown[] => {
    if (!Array.isArray(what)) throw conflict(`${operator} on ${path} needs arrays.`);
    return what;
  };
  switch (operator) {
    case 'value':
      if (argument === null) delete values[parameter];
      else values[parameter] = structuredClone(argument);
      return;
    case 'add':
      values[parameter] = [...new Set([...(current === undefined ? [] : list(current)), ...list(argument)])];
      return;
    case 'default':
      if (current === undefined) values[parameter] = structuredClone(argument);
      return;
    case 'one_of':
      if (current !== undefined && !list(argument).some((item) => isDeepStrictEqual(item, current))) throw conflict(`${path} is ${JSON.stringify(current)}, not one of ${JSON.stringify(argument)}.`);
      return;
    case 'subset_of': {
      if (current === undefined) return;
      const kept = list(current).filter((item) => list(argument).some((allowed) => isDeepStrictEqual(allowed, item)));
      if (kept.length === 0) delete values[parameter];
      else values[parameter] = kept;
      return;
    }
    case 'superset_of':
      if (current !== undefined && !list(argument).every((needed) => list(current).some((item) => isDeepStrictEqual(item, needed)))) {
        throw conflict(`${path} lacks values its superior requires (${JSON.stringify(argument)}).`);
      }
      return;
    case 'essential':
      if (argument === true && (current === undefined || (Array.isArray(current) && current.length === 0))) throw conflict(`${path} is essential and missing.`);
      return;
  }
}
