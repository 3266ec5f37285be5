import type { FastifyInstance } from 'fastify';
import { html } from '../views/html.ts';
import { sendPage } from '../views/send-page.ts';

// Placeholder until the page is built (issue 13).
export function registerSettingsPage(app: FastifyInstance, _deps: unknown): void {
  app.get('/settings', async (request, reply) => sendPage(request, reply, { page: 'settings', title: 'Settings' }, html`<p>Not built yet.</p>`));
}
