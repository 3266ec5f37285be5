/** What the image is built from: this checkout, its commit and where its source lives (the OCI labels). */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

const git = (args: string[]) => {
  const run = spawnSync('git', args, { cwd: REPO_ROOT, encoding: 'utf8' });
  return run.status === 0 ? run.stdout.trim() : '';
};

/** The commit built (org.opencontainers.image.revision). */
export function gitRevision(): string {
  const commit = git(['rev-parse', 'HEAD']);
  if (!commit) throw new Error(`${REPO_ROOT} is not a git checkout: the image's revision label would be empty`);
  return commit;
}

/** The clone's origin (org.opencontainers.image.source), else this checkout's path as a file URL. */
export function sourceUrl(): string {
  return git(['remote', 'get-url', 'origin']) || `file://${REPO_ROOT.replace(/\/$/, '')}`;
}
