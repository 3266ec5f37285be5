/**
 * What the built image holds and says of itself: its labels (version and licence from package.json,
 * source and revision as built), its user, entry point, volume and health check; only the files it
 * runs under /app (no tests, docs or keys); no npm; and in node_modules only production dependencies:
 * every package there is checked against package-lock.json, where npm marks each one a dev
 * dependency needs (`"dev": true`). Throws on the first thing wrong.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Podman } from './podman.ts';
import { REPO_ROOT } from './source.ts';

export const APP_FILES = ['bin', 'deploy', 'node_modules', 'package-lock.json', 'package.json', 'src'];

type ImageConfig = {
  Size: number;
  Config: { User?: string; Entrypoint?: string[]; Cmd?: string[]; Volumes?: Record<string, unknown>; Labels?: Record<string, string> };
  Healthcheck?: { Test?: string[] };
};

export type Lockfile = { packages: Record<string, { dev?: boolean; name?: string }> };
export type PackageJson = { dependencies: Record<string, string>; devDependencies: Record<string, string> };

/**
 * What is wrong with an image's node_modules (the package folders installed, as `node_modules/a`,
 * `node_modules/a/node_modules/b`): a package the lockfile marks dev, one it does not list, a
 * production dependency missing, a devDependency present. Empty when it is the production set.
 */
export function packageProblems(installed: readonly string[], lock: Lockfile, pkg: PackageJson): string[] {
  const problems: string[] = [];
  const dev = installed.filter((path) => lock.packages[path]?.dev === true);
  if (dev.length > 0) problems.push(`dev dependencies in the image's node_modules: ${dev.join(', ')}`);
  const unknown = installed.filter((path) => !lock.packages[path]);
  if (unknown.length > 0) problems.push(`packages in the image that package-lock.json does not list: ${unknown.join(', ')}`);
  const missing = Object.keys(pkg.dependencies).filter((name) => !installed.includes(`node_modules/${name}`));
  if (missing.length > 0) problems.push(`production dependencies missing from the image: ${missing.join(', ')}`);
  const devDirect = Object.keys(pkg.devDependencies).filter((name) => installed.includes(`node_modules/${name}`));
  if (devDirect.length > 0) problems.push(`devDependencies in the image: ${devDirect.join(', ')}`);
  return problems;
}

/** Lists, inside the image, /app, every package folder under /app/node_modules, and whether npm is there. */
const LIST_SCRIPT = `
const fs = require('node:fs'); const path = require('node:path');
const packages = [];
const walk = (dir, rel) => {
  if (!fs.existsSync(dir)) return;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
    if (entry.name.startsWith('@')) { walk(path.join(dir, entry.name), rel + entry.name + '/'); continue; }
    const at = rel + entry.name;
    if (fs.existsSync(path.join(dir, entry.name, 'package.json'))) packages.push(at);
    walk(path.join(dir, entry.name, 'node_modules'), at + '/node_modules/');
  }
};
walk('/app/node_modules', 'node_modules/');
console.log(JSON.stringify({ app: fs.readdirSync('/app').sort(), packages, npm: ['/usr/local/bin/npm', '/usr/local/lib/node_modules', '/usr/bin/npm'].filter((p) => fs.existsSync(p)) }));
`;

export type Expected = { version: string; license: string; source: string; revision: string };

export function inspectImage(podman: Podman, image: string, base: string, expected: Expected): { lines: string[]; report: string[] } {
  const [config] = JSON.parse(podman(['image', 'inspect', image])) as ImageConfig[];
  const [baseConfig] = JSON.parse(podman(['image', 'inspect', base])) as ImageConfig[];
  if (!config || !baseConfig) throw new Error(`podman image inspect found no ${image} or ${base}`);
  const labels = config.Config.Labels ?? {};
  const wanted: Record<string, string> = {
    'org.opencontainers.image.version': expected.version,
    'org.opencontainers.image.licenses': expected.license,
    'org.opencontainers.image.source': expected.source,
    'org.opencontainers.image.revision': expected.revision,
  };
  for (const [label, value] of Object.entries(wanted)) {
    if (labels[label] !== value) throw new Error(`label ${label} is "${labels[label]}", expected "${value}"`);
  }
  if (!config.Config.User || /^(0|root)(:|$)/.test(config.Config.User)) throw new Error(`the image runs as "${config.Config.User}", not a non-root user`);
  if (config.Config.Entrypoint?.join(' ') !== 'node /app/bin/ward.js') throw new Error(`entry point ${JSON.stringify(config.Config.Entrypoint)}`);
  if (!config.Config.Volumes || !('/var/lib/ward' in config.Config.Volumes)) throw new Error('/var/lib/ward is not a volume');
  if (!config.Healthcheck?.Test?.join(' ').includes('healthcheck.ts')) throw new Error(`no HEALTHCHECK kept (build with --format docker): ${JSON.stringify(config.Healthcheck)}`);

  const listed = JSON.parse(podman(['run', '--rm', '--network', 'none', '--read-only', '--health-interval', 'disable', '--entrypoint', 'node', image, '-e', LIST_SCRIPT])) as { app: string[]; packages: string[]; npm: string[] };
  if (listed.app.join(' ') !== APP_FILES.join(' ')) throw new Error(`/app holds ${listed.app.join(', ')}; expected only ${APP_FILES.join(', ')}`);
  if (listed.npm.length > 0) throw new Error(`npm is in the runtime image: ${listed.npm.join(', ')}`);
  const lock = JSON.parse(readFileSync(join(REPO_ROOT, 'package-lock.json'), 'utf8')) as Lockfile;
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as PackageJson;
  const problems = packageProblems(listed.packages, lock, pkg);
  if (problems.length > 0) throw new Error(problems.join('; '));

  const size = (bytes: number) => `${(bytes / 1e6).toFixed(0)} MB`;
  return {
    lines: [
      `labels: version ${expected.version}, licences ${expected.license}, source ${expected.source}, revision ${expected.revision.slice(0, 12)}`,
      `user ${config.Config.User}, entry point ${config.Config.Entrypoint.join(' ')}, default command ${config.Config.Cmd?.join(' ')}, volume /var/lib/ward, HEALTHCHECK ${config.Healthcheck.Test.slice(1).join(' ')}`,
      `/app: ${listed.app.join(', ')}; no npm`,
      `node_modules: ${listed.packages.length} packages, none a dev dependency (of ${Object.keys(lock.packages).filter((path) => lock.packages[path]?.dev).length} the lockfile marks dev)`,
    ],
    report: [`image size: ${size(config.Size)} (the base ${size(baseConfig.Size)}, Ward and its production node_modules ${size(config.Size - baseConfig.Size)})`],
  };
}
