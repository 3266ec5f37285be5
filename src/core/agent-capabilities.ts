/**
 * What an agent offers, as discovery and routing match it (contract §3, §4): one definition shared by
 * the matching in memory (registry/discovery/agent-filters.ts) and the copies on the skill rows that
 * let SQL narrow candidates first (stores/agent-store.ts).
 */
type CapabilitiesLike = { features?: readonly string[] | undefined; protocols?: readonly string[] | undefined; [flag: string]: unknown };

/** `capabilities.features` plus every boolean flag set true in `capabilities`. */
export function featuresOf(capabilities: CapabilitiesLike): Set<string> {
  const features = new Set(capabilities.features ?? []);
  for (const [name, value] of Object.entries(capabilities)) if (value === true) features.add(name);
  return features;
}

/** The declared protocols and every endpoint's protocol. */
export function protocolsOf(document: { capabilities: CapabilitiesLike; endpoints: ReadonlyArray<{ protocol: string }> }): Set<string> {
  return new Set([...(document.capabilities.protocols ?? []), ...document.endpoints.map((endpoint) => endpoint.protocol)]);
}

/**
 * Tokens as one searchable text: space-separated and space-padded (` a b `), so `LIKE '% a %'`
 * finds exactly a whole token. Tokens that hold a space (a boolean flag's name may) can make the
 * SQL match more than it should, never less; the match in memory is exact.
 */
export function tokenText(tokens: Iterable<string>): string {
  return ` ${[...tokens].join(' ')} `;
}

/** The LIKE pattern that finds `token` in a {@link tokenText}, with LIKE's wildcards escaped (`\`). */
export function tokenPattern(token: string): string {
  return `% ${token.replace(/[\\%_]/g, (c) => `\\${c}`)} %`;
}
