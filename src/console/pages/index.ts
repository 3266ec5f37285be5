import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import type { ConsoleConfig } from '../console-config.ts';
import { registerAgentPages } from './agents.ts';
import { registerAlertsPage } from './alerts.ts';
import { registerComputerUsePages } from './computer-use.ts';
import { registerAuditPage } from './audit.ts';
import { registerDashboardPage } from './dashboard.ts';
import { registerDiagnosticsPage } from './diagnostics.ts';
import { registerFederationPage } from './federation.ts';
import { registerMeshPage } from './mesh.ts';
import { registerRoutingPage } from './routing.ts';
import { registerSettingsPage } from './settings.ts';
import { registerTrustPage } from './trust.ts';
import { registerTryPage } from './try.ts';

export type PageDeps = { config: ConsoleConfig };

/** The pages (contract §12's nine, the mesh page, the try page and the computer-use runs), one file each. */
export function registerPages(app: FastifyInstance, deps: PageDeps): void {
  registerDashboardPage(app);
  registerAgentPages(app);
  registerMeshPage(app, deps);
  registerTrustPage(app);
  registerFederationPage(app);
  registerRoutingPage(app);
  registerTryPage(app, deps);
  registerAuditPage(app);
  registerAlertsPage(app);
  registerDiagnosticsPage(app, deps);
  registerComputerUsePages(app);
  registerSettingsPage(app, deps);
}

/** `registerPages` as the `ward-console-pages` plugin, over `ward-console-access` (each page reads `request.viewer` and `request.registry`). */
export const consolePages = fastifyPlugin<PageDeps>(async (app, deps) => registerPages(app, deps), {
  name: 'ward-console-pages',
  fastify: '5.x',
  dependencies: ['ward-console-access'],
  decorators: { request: ['registry', 'viewer'] },
});
