/**
 * The console's static files (web/): its stylesheet, script and icon, and htmx. Read once at start;
 * revalidated on each use (`no-cache`), so a new version is seen at once.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import fastifyPlugin from 'fastify-plugin';

const require = createRequire(import.meta.url);
const STATIC_FILES: ReadonlyArray<readonly [name: string, path: string | URL, type: string]> = [
  ['console.css', new URL('./web/console.css', import.meta.url), 'text/css; charset=utf-8'],
  ['console.js', new URL('./web/console.js', import.meta.url), 'text/javascript; charset=utf-8'],
  ['favicon.svg', new URL('./web/favicon.svg', import.meta.url), 'image/svg+xml'],
  ['htmx.min.js', require.resolve('htmx.org/dist/htmx.min.js'), 'text/javascript; charset=utf-8'],
];

/** `/static/<name>` for each file, as the `ward-console-static` plugin. */
export const consoleStatic = fastifyPlugin(
  async (app) => {
    for (const [name, path, type] of STATIC_FILES) {
      const body = readFileSync(path);
      app.get(`/static/${name}`, async (_request, reply) => reply.type(type).header('cache-control', 'no-cache').send(body));
    }
  },
  { name: 'ward-console-static', fastify: '5.x' },
);
