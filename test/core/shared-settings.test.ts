/**
 * One definition per environment variable (issue 18): a variable that several processes read (the
 * registry, the mesh, the console, the MCP server) is declared once, in src/core/config.ts, and the
 * other configurations reuse that very schema, so its type, default and limits cannot drift apart.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TObject } from 'typebox';
import { ConsoleConfigSchema } from '../../src/console/console-config.ts';
import { ConfigSchema } from '../../src/core/config.ts';
import { McpConfigSchema } from '../../src/mcp/mcp-config.ts';
import { MeshConfigSchema } from '../../src/mesh/mesh-config.ts';

test('a variable several configurations read is the same schema object in each', () => {
  const schemas: Record<string, TObject> = { registry: ConfigSchema, mesh: MeshConfigSchema, console: ConsoleConfigSchema, mcp: McpConfigSchema };
  const seen = new Map<string, { owner: string; schema: unknown }>();
  const shared: string[] = [];
  for (const [owner, schema] of Object.entries(schemas)) {
    for (const [name, property] of Object.entries(schema.properties)) {
      const first = seen.get(name);
      if (!first) {
        seen.set(name, { owner, schema: property });
        continue;
      }
      shared.push(name);
      // REGISTRY_URL and GATEWAY_URL mean different things to their readers (required for the MCP
      // server, defaulted from the port for the console), so each declares its own.
      if (name === 'REGISTRY_URL' || name === 'GATEWAY_URL') continue;
      assert.equal(property, first.schema, `${name}: ${owner} declares its own schema instead of ${first.owner}'s`);
    }
  }
  assert.ok(shared.includes('REGISTRY_ENV') && shared.includes('MESH_JWT_SECRET') && shared.includes('GATEWAY_PORT'), shared.join(', '));
});
