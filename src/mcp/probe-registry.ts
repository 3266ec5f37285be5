import { ConfigError } from '../core/config.ts';
import type { RegistryClient } from '../client/registry-client.ts';

/** What the probe learnt about the registry (a subset of the spec's Server metadata). */
export type RegistryIdentity = {
  registry_id: string;
  issuer: string | undefined;
  /** Whether the registry authenticates callers (its metadata lists an auth method); false in development. */
  authentication_required: boolean;
};

/**
 * Asks the registry for its server metadata (`GET /.well-known/agent-registry`, contract §5) with
 * the API key, before any MCP client connects, so a configuration that cannot work stops start-up
 * with a message naming the variable instead of failing on every tool call:
 * - nothing answers, or the answer is not a Ward registry's metadata → `REGISTRY_URL`;
 * - the registry refuses the key (a presented key is checked even on public routes) → `REGISTRY_API_KEY`.
 * Scopes are not checked: a read-only key is a legitimate setup (discovery only), and `register`
 * then reports the registry's 403 like any other error.
 */
export async function probeRegistry(registry: RegistryClient): Promise<RegistryIdentity> {
  const answer = await registry.metadata();
  if (answer.ok) {
    const body = answer.body as { registry_id?: unknown; issuer?: unknown; supported_auth_methods?: unknown } | null;
    if (typeof body?.registry_id === 'string') {
      const methods = body.supported_auth_methods;
      return {
        registry_id: body.registry_id,
        issuer: typeof body.issuer === 'string' ? body.issuer : undefined,
        // Unknown (not a list) counts as required: only a registry that says it has none runs keyless.
        authentication_required: !Array.isArray(methods) || methods.length > 0,
      };
    }
    throw new ConfigError(
      'REGISTRY_URL',
      `${registry.baseUrl} answered, but not with a Ward registry's metadata (no registry_id at /.well-known/agent-registry)`,
    );
  }
  const { code, message } = answer.envelope.error;
  if (answer.status === 401)
    throw new ConfigError(
      'REGISTRY_API_KEY',
      `the registry at ${registry.baseUrl} refused the key (${code}: ${message})`,
    );
  if (answer.status === null) {
    const cause = answer.envelope.error.details.cause;
    throw new ConfigError(
      'REGISTRY_URL',
      `no registry answered at ${registry.baseUrl} (${typeof cause === 'string' ? cause : message})`,
    );
  }
  throw new ConfigError(
    'REGISTRY_URL',
    `${registry.baseUrl}/.well-known/agent-registry answered HTTP ${answer.status} (${code}: ${message})`,
  );
}
