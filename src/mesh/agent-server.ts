import { pathToFileURL } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { systemClock } from '../core/clock.ts';
import { loadManifest, type AgentManifest } from './gateway/manifest.ts';
import { agentDid, type MeshConfig } from './mesh-config.ts';
import { agentDataDir } from './runtime/agent-data-dir.ts';
import { buildAgentApp } from './runtime/agent-runtime.ts';
import type { AgentFactory } from './runtime/mesh-agent.ts';
import { consentCheckerFor, loadBodySigner } from './runtime/remote-consent.ts';

/** The message a child agent sends its gateway (Node IPC) once it listens: the port it got. */
export type AgentListeningMessage = { readonly type: 'ward-agent-listening'; readonly alias: string; readonly port: number };

/**
 * Builds the agent `alias` from the manifest entry's `createAgent`, without listening. The consent
 * checker goes through MESH_CONSENT_URL or the gateway (remote-consent.ts).
 */
export async function buildManifestAgent(
  config: MeshConfig,
  alias: string,
  options: { manifest?: AgentManifest; logger?: false } = {},
): Promise<FastifyInstance> {
  const manifest = options.manifest ?? loadManifest(config.MESH_MANIFEST);
  const entry = manifest.agents.get(alias);
  if (!entry) throw new Error(`unknown agent "${alias}" (the manifest ${manifest.source} has: ${[...manifest.agents.keys()].join(', ')})`);
  const module = (await import(pathToFileURL(entry.entry).href)) as { createAgent?: AgentFactory };
  if (typeof module.createAgent !== 'function') throw new Error(`${entry.entry} does not export createAgent`);
  const did = agentDid(config, alias);
  const consent = consentCheckerFor(config, did, await loadBodySigner(config, did));
  const agent = await module.createAgent({ alias, config, dataDir: agentDataDir(config, alias), did, clock: systemClock, consent });
  return buildAgentApp({ agent, config, consent, ...(options.logger === false ? { logger: false as const } : {}) });
}

/**
 * Starts one agent (`ward agent <alias>`): build, listen on AGENT_PORT (default: its manifest port),
 * log the address, and tell a parent gateway the port over IPC.
 */
export async function startAgent(config: MeshConfig, alias: string): Promise<{ app: FastifyInstance; url: string }> {
  const manifest = loadManifest(config.MESH_MANIFEST);
  const app = await buildManifestAgent(config, alias, { manifest });
  const port = config.AGENT_PORT ?? (manifest.agents.get(alias)?.port as number);
  await app.listen({ host: config.MESH_HOST, port });
  const address = app.server.address();
  const actualPort = address && typeof address === 'object' ? address.port : port;
  const url = `http://${config.MESH_HOST}:${actualPort}`;
  app.log.info({ url, alias }, 'agent listening');
  if (process.send) process.send({ type: 'ward-agent-listening', alias, port: actualPort } satisfies AgentListeningMessage);
  return { app, url };
}
