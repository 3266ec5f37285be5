/**
 * The container image's HEALTHCHECK: `GET /livez` of the server the container runs, with Node itself
 * (the image has no curl). One image runs every `ward` command, so this finds which one: the command
 * given as its argument, else the `ward` process with the lowest PID (the gateway's agents come after
 * it). Its address comes from the same settings, read by Ward's own schemas: a wildcard host is asked
 * on loopback, TLS when the server has a certificate (its name is not checked: the probe asks whether
 * the process answers, not who it is). Exit 0 when it answers 200 (or the command serves nothing,
 * such as `ward migrate`), 1 otherwise. Kubernetes ignores it and probes over HTTP (deploy/kubernetes).
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { readFileSync, readdirSync } from 'node:fs';
import { ConsoleConfigSchema } from '../../src/console/console-config.ts';
import { ConfigSchema } from '../../src/core/config.ts';
import { readEnvironment } from '../../src/core/env-schema.ts';
import { MeshConfigSchema } from '../../src/mesh/mesh-config.ts';

const TIMEOUT_MS = 4000;

export type ProbeTarget = { url: string; tls: boolean } | { none: string };

/** Where the server of `command` answers /livez, from the environment it was started with. */
export function probeTarget(command: string, env: Record<string, string | undefined>): ProbeTarget {
  const read = (schema: Parameters<typeof readEnvironment>[0]) => readEnvironment(schema, env) as Record<string, string | number | undefined>;
  if (command === 'registry' || command === 'start') {
    const config = read(ConfigSchema);
    return target(String(config.REGISTRY_HOST), Number(config.REGISTRY_PORT), Boolean(config.REGISTRY_TLS_CERT_FILE));
  }
  if (command === 'gateway') {
    const config = read(MeshConfigSchema);
    return target(String(config.MESH_HOST), Number(config.GATEWAY_PORT), false);
  }
  if (command === 'console') {
    const config = read(ConsoleConfigSchema);
    return target(String(config.CONSOLE_HOST), Number(config.CONSOLE_PORT), Boolean(config.CONSOLE_TLS_CERT_FILE));
  }
  return { none: `ward ${command} serves no /livez: nothing to check` };
}

function target(host: string, port: number, tls: boolean): ProbeTarget {
  if (port === 0) return { none: 'the server listens on a free port (0) this check cannot know' };
  const address = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '[::1]' : host.includes(':') ? `[${host}]` : host;
  return { url: `${tls ? 'https' : 'http'}://${address}:${port}/livez`, tls };
}

/** The `ward` command of the container: the arguments after the entry script of the lowest PID running one. */
export function runningCommand(): string | undefined {
  const pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name)).map(Number).sort((a, b) => a - b);
  for (const pid of pids) {
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    } catch {
      continue; // gone meanwhile
    }
    const entry = argv.findIndex((arg) => /(^|\/)(bin\/ward\.js|cli\/ward\.ts|ward)$/.test(arg));
    if (entry > 0 && /(^|\/)node$/.test(argv[0] ?? '')) return argv[entry + 1] || 'help';
  }
  return undefined;
}

function livez(url: string, tls: boolean): Promise<number> {
  return new Promise((resolve, reject) => {
    const options = { timeout: TIMEOUT_MS, ...(tls ? { rejectUnauthorized: false } : {}) };
    const request = (tls ? httpsRequest : httpRequest)(url, options, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.on('timeout', () => request.destroy(new Error(`no answer in ${TIMEOUT_MS} ms`)));
    request.on('error', reject);
    request.end();
  });
}

async function main(): Promise<number> {
  const command = process.argv[2] ?? runningCommand();
  if (!command) {
    console.error('unhealthy: no ward process runs in this container');
    return 1;
  }
  const probe = probeTarget(command, process.env);
  if ('none' in probe) {
    console.log(probe.none);
    return 0;
  }
  try {
    const status = await livez(probe.url, probe.tls);
    console.log(`${status === 200 ? 'healthy' : 'unhealthy'}: ${probe.url} answered ${status}`);
    return status === 200 ? 0 : 1;
  } catch (error) {
    console.error(`unhealthy: ${probe.url}: ${(error as Error).message}`);
    return 1;
  }
}

if (import.meta.main) process.exitCode = await main();
