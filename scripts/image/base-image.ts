/**
 * The base image CI builds the Containerfile on, made here because these machines reach no container
 * registry: a minimal Debian (mmdebstrap's `essential` variant, plus libstdc++ for Node and passwd for
 * `useradd`) from the host's own Debian package sources, with the official Node 24 binary this
 * project pins (the `node` devDependency: the Node that runs this script) at /usr/local/bin/node and
 * npm beside it: the layout of the official image the Containerfile defaults to.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, statfsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Podman } from './podman.ts';

const PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** The Debian release of this host: the suite the base is made of, from the sources apt here uses. */
function hostSuite(): string {
  const release = readFileSync('/etc/os-release', 'utf8').match(/^VERSION_CODENAME=(\w+)$/m);
  if (!release?.[1]) throw new Error('/etc/os-release names no VERSION_CODENAME: not a Debian host, no base can be made here');
  return release[1];
}

/** The host's Debian package sources (deb822 or one-line), which mmdebstrap reads as they are. */
function hostSources(): string[] {
  const sources = ['/etc/apt/sources.list.d/debian.sources', '/etc/apt/sources.list'].filter((file) => existsSync(file) && readFileSync(file, 'utf8').match(/^\s*(deb |Types:)/m));
  if (sources.length === 0) throw new Error('no Debian package sources in /etc/apt: mmdebstrap has nothing to install from');
  return sources;
}

/** The npm that runs this script (npm run sets npm_execpath), else the one on the PATH's prefix. */
function npmDirectory(): string {
  const cli = process.env.npm_execpath;
  if (cli && /npm-cli\.js$/.test(cli)) return dirname(dirname(cli));
  for (const dir of ['/usr/lib/node_modules/npm', '/usr/local/lib/node_modules/npm']) if (existsSync(join(dir, 'bin', 'npm-cli.js'))) return dir;
  throw new Error('npm was not found to put in the base image: run this through `npm run image:test`');
}

/** A temporary folder in memory when there is room: unpacking the packages there is twice as fast. */
function scratch(): string | undefined {
  try {
    const fs = statfsSync('/dev/shm');
    return fs.bavail * fs.bsize > 2 * 1024 ** 3 ? '/dev/shm' : undefined;
  } catch {
    return undefined;
  }
}

/** Makes the base with mmdebstrap and imports it into podman's storage as `tag`. */
export async function buildBaseImage(podman: Podman, tag: string): Promise<void> {
  if (!process.version.startsWith('v24.')) throw new Error(`the base carries the Node that runs this script, ${process.version}: run it with Node 24 (npm run image:test)`);
  const npm = npmDirectory();
  const args = [
    '--variant=essential',
    '--include=libstdc++6,passwd',
    ...['man', 'doc', 'locale', 'info'].map((dir) => `--dpkgopt=path-exclude=/usr/share/${dir}/*`),
    `--customize-hook=copy-in ${process.execPath} /usr/local/bin`,
    '--customize-hook=mkdir -p "$1/usr/local/lib/node_modules"',
    `--customize-hook=copy-in ${npm} /usr/local/lib/node_modules`,
    '--customize-hook=ln -s ../lib/node_modules/npm/bin/npm-cli.js "$1/usr/local/bin/npm" && ln -s ../lib/node_modules/npm/bin/npx-cli.js "$1/usr/local/bin/npx"',
    hostSuite(),
    '-',
    ...hostSources(),
  ];
  if (process.execPath.split('/').pop() !== 'node') throw new Error(`the Node binary ${process.execPath} is not named node`);
  const tmp = scratch();
  const debootstrap = spawn('mmdebstrap', ['--quiet', ...args], { env: { ...process.env, ...(tmp ? { TMPDIR: tmp } : {}) }, stdio: ['ignore', 'pipe', 'inherit'] });
  const made = new Promise<void>((resolve, reject) => {
    debootstrap.once('error', reject);
    debootstrap.once('close', (status) => (status === 0 ? resolve() : reject(new Error(`mmdebstrap exited ${status} (its output is above)`))));
  });
  const imported = podman.stream(['import', '--quiet', '--change', `ENV PATH=${PATH}`, '--change', 'CMD ["node"]', '-', tag], debootstrap.stdout);
  await Promise.all([made, imported]);
}
