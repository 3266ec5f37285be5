import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { MeshConfig } from '../mesh-config.ts';

/** The directory an agent keeps its files in (`<MESH_DATA_DIR>/agents/<alias>`), created on demand. */
export function agentDataDir(config: MeshConfig, alias: string): string {
  const dir = join(config.MESH_DATA_DIR, 'agents', alias);
  mkdirSync(dir, { recursive: true });
  return dir;
}
