import { parseArgs } from 'node:util';
import { loadMeshConfig } from '../../mesh/mesh-config.ts';
import { issueMeshToken } from '../../mesh/runtime/auth.ts';
import type { WardCommand } from '../command.ts';

const USAGE = `Usage: ward token [--sub did:web:<domain>:agents:<name>] [--ttl <seconds, at most 3600>]

Prints a mesh token (HS256, scope mesh:invoke) signed with MESH_JWT_SECRET, for calling agents by hand.
  --sub  the caller's DID (default did:web:localhost:agents:cli)
  --ttl  lifetime in seconds (default 300)

Example:
  curl -H "authorization: Bearer $(npx ward token)" …`;

/** Prints a mesh token (HS256, scope mesh:invoke) signed with MESH_JWT_SECRET, for calling agents by hand. */
export const tokenCommand: WardCommand = {
  name: 'token',
  usage: USAGE,
  async run(args) {
    const { values } = parseArgs({ args, options: { sub: { type: 'string' }, ttl: { type: 'string' } } });
    const ttl = Number(values.ttl ?? 300);
    if (!Number.isInteger(ttl) || ttl < 1 || ttl > 3600) {
      console.error(USAGE);
      return 2;
    }
    const config = loadMeshConfig();
    console.log(await issueMeshToken({ secret: config.MESH_JWT_SECRET, sub: values.sub ?? 'did:web:localhost:agents:cli', ttlSeconds: ttl }));
    return 0;
  },
};
