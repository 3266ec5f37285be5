import type { FastifyInstance } from 'fastify';
import { html } from '../views/html.ts';
import { sendPage } from '../views/send-page.ts';

// Placeholder until the page is built (issue 13).
export function registerDiagnosticsPage(app: FastifyInstance, _deps: unknown): void {
  app.get('/diagnostics', async (request, reply) => sendPage(request, reply, { page: 'diagnostics', title: 'Diagnostics' }, html`<p>Not built yet.</p>`));
}
