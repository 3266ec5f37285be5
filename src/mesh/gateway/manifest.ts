/**
 * The agent manifest: each alias with its entry point (a module exporting `createAgent`), its port
 * and the aliases it depends on. Validated at load: unknown dependencies, duplicate ports and
 * dependency cycles are refused there, never discovered at start time. Pure apart from reading the file.
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Type } from 'typebox';
import { Value } from 'typebox/value';

/** The manifest shipped with Ward (consent, triage). */
export const DEFAULT_MANIFEST_PATH = fileURLToPath(new URL('../agents/manifest.json', import.meta.url));

const ALIAS_PATTERN = '^[a-z][a-z0-9_-]{0,62}$';
const Alias = Type.String({ pattern: ALIAS_PATTERN });

const ManifestSchema = Type.Object({
  agents: Type.Record(
    Type.String(),
    Type.Object(
      {
        entry: Type.String({ minLength: 1 }),
        /** `0`: any free port, reported by the child once it listens. */
        port: Type.Integer({ minimum: 0, maximum: 65535 }),
        dependencies: Type.Optional(Type.Array(Alias, { maxItems: 32 })),
        idle_timeout_ms: Type.Optional(Type.Integer({ minimum: 0 })),
        start_timeout_ms: Type.Optional(Type.Integer({ minimum: 1 })),
        env: Type.Optional(Type.Record(Type.String({ pattern: '^[A-Z_][A-Z0-9_]*$' }), Type.String())),
        /** A web page the agent serves (a path on the agent, e.g. `/avatar`): linked from /health and the console. */
        page: Type.Optional(Type.String({ pattern: '^/[A-Za-z0-9._~/-]{0,200}$' })),
      },
      { additionalProperties: false },
    ),
  ),
});

export type ManifestAgent = {
  readonly alias: string;
  /** Absolute path of the entry module. */
  readonly entry: string;
  readonly port: number;
  readonly dependencies: readonly string[];
  readonly idleTimeoutMs?: number;
  readonly startTimeoutMs?: number;
  readonly env: Readonly<Record<string, string>>;
  /** The agent's web page, a path on the agent (reached through the gateway at `/rpc/<alias><page>`). */
  readonly page?: string;
};

export type AgentManifest = { readonly source: string; readonly agents: ReadonlyMap<string, ManifestAgent> };

export class ManifestError extends Error {
  constructor(source: string, message: string) {
    super(`agent manifest ${source}: ${message}`);
    this.name = 'ManifestError';
  }
}

/** A dependency cycle as a path that ends where it starts (`a → b → a`), or undefined. */
export function findCycle(dependencies: ReadonlyMap<string, readonly string[]>): string[] | undefined {
  const state = new Map<string, 'visiting' | 'done'>();
  const path: string[] = [];
  const visit = (alias: string): string[] | undefined => {
    if (state.get(alias) === 'done') return undefined;
    if (state.get(alias) === 'visiting') return [...path.slice(path.indexOf(alias)), alias];
    state.set(alias, 'visiting');
    path.push(alias);
    for (const next of dependencies.get(alias) ?? []) {
      const cycle = visit(next);
      if (cycle) return cycle;
    }
    path.pop();
    state.set(alias, 'done');
    return undefined;
  };
  for (const alias of [...dependencies.keys()].sort()) {
    const cycle = visit(alias);
    if (cycle) return cycle;
  }
  return undefined;
}

/** Validates a decoded manifest; entry paths are resolved against `baseDir`. */
export function parseManifest(value: unknown, baseDir: string, source = '(inline)'): AgentManifest {
  if (!Value.Check(ManifestSchema, value)) {
    const error = Value.Errors(ManifestSchema, value)[0];
    throw new ManifestError(source, `${error?.instancePath || '/'} ${error?.message ?? 'is invalid'}`);
  }
  const agents = new Map<string, ManifestAgent>();
  const ports = new Map<number, string>();
  for (const [alias, entry] of Object.entries(value.agents).sort(([a], [b]) => a.localeCompare(b))) {
    if (!Value.Check(Alias, alias)) throw new ManifestError(source, `alias "${alias}" must match ${ALIAS_PATTERN}`);
    if (entry.port !== 0) {
      const other = ports.get(entry.port);
      if (other) throw new ManifestError(source, `${alias} and ${other} both use port ${entry.port}`);
      ports.set(entry.port, alias);
    }
    agents.set(alias, {
      alias,
      entry: resolve(baseDir, entry.entry),
      port: entry.port,
      dependencies: [...new Set(entry.dependencies ?? [])],
      ...(entry.idle_timeout_ms === undefined ? {} : { idleTimeoutMs: entry.idle_timeout_ms }),
      ...(entry.start_timeout_ms === undefined ? {} : { startTimeoutMs: entry.start_timeout_ms }),
      env: entry.env ?? {},
      ...(entry.page === undefined ? {} : { page: entry.page }),
    });
  }
  for (const agent of agents.values()) {
    for (const dependency of agent.dependencies) {
      if (!agents.has(dependency)) throw new ManifestError(source, `${agent.alias} depends on unknown agent "${dependency}"`);
    }
  }
  const cycle = findCycle(new Map([...agents].map(([alias, agent]) => [alias, agent.dependencies])));
  if (cycle) throw new ManifestError(source, `dependency cycle ${cycle.join(' → ')}`);
  return { source, agents };
}

/** Reads and validates a manifest file (default: the shipped one). */
export function loadManifest(path: string = DEFAULT_MANIFEST_PATH): AgentManifest {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new ManifestError(path, `cannot be read as JSON (${(error as Error).message})`);
  }
  return parseManifest(value, dirname(resolve(path)), path);
}

/** The aliases to start for `alias`, dependencies first (post-order), `alias` last. */
export function startOrder(manifest: AgentManifest, alias: string): string[] {
  const order: string[] = [];
  const visit = (name: string) => {
    if (order.includes(name)) return;
    for (const dependency of manifest.agents.get(name)?.dependencies ?? []) visit(dependency);
    order.push(name);
  };
  visit(alias);
  return order;
}

/** Every alias that depends on `alias`, directly or not. */
export function dependentsOf(manifest: AgentManifest, alias: string): Set<string> {
  const dependents = new Set<string>();
  for (const candidate of manifest.agents.keys()) {
    if (candidate !== alias && startOrder(manifest, candidate).includes(alias)) dependents.add(candidate);
  }
  return dependents;
}
