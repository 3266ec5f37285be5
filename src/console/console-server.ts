import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../core/clock.ts';
import { buildConsole } from './console-app.ts';
import type { ConsoleConfig } from './console-config.ts';

export type RunningConsole = { app: FastifyInstance; url: string; openAccess: boolean; close(): Promise<void> };

/** Starts the console on CONSOLE_HOST:CONSOLE_PORT (0 = any free port) and logs its address (contract §1). */
export async function startConsole(config: ConsoleConfig, options: { clock?: Clock } = {}): Promise<RunningConsole> {
  const https = config.CONSOLE_TLS_CERT_FILE && config.CONSOLE_TLS_KEY_FILE
    ? { cert: readFileSync(config.CONSOLE_TLS_CERT_FILE), key: readFileSync(config.CONSOLE_TLS_KEY_FILE) }
    : undefined;
  const app = await buildConsole({ config, https, ...options });
  await app.listen({ host: config.CONSOLE_HOST, port: config.CONSOLE_PORT });
  const { port } = app.server.address() as AddressInfo;
  const host = config.CONSOLE_HOST === '0.0.0.0' || config.CONSOLE_HOST === '::' ? '127.0.0.1' : config.CONSOLE_HOST.includes(':') ? `[${config.CONSOLE_HOST}]` : config.CONSOLE_HOST;
  const url = `${https ? 'https' : 'http'}://${host}:${port}`;
  app.log.info({ url, registry: config.REGISTRY_URL, open_access: config.openAccess }, 'console listening');
  return { app, url, openAccess: config.openAccess, close: () => app.close() };
}
