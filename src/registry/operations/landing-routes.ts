import { registryRoutePlugin } from '../http/route-plugin.ts';
import { registryUri } from '../../core/ids.ts';
import { WARD_VERSION } from '../../core/version.ts';

/**
 * `GET /`: where a person (or a client) who opened the registry's address goes next — the API
 * document, the metadata, health, the console and the documentation — instead of a 404. Public, like
 * the metadata it links; not an API operation, so it stays out of the OpenAPI document.
 */
export const landingRoutes = registryRoutePlugin('ward-landing-routes', async (app) => {
  app.get('/', { schema: { hide: true } }, async () => {
    const base = app.ward.baseUrl();
    const { config } = app.ward;
    return {
      service: 'Ward registry',
      version: WARD_VERSION,
      registry_id: registryUri(config.REGISTRY_JURISDICTION, config.REGISTRY_NAME),
      links: {
        openapi: `${base}/v1/openapi.json`,
        metadata: `${base}/.well-known/agent-registry`,
        health: `${base}/health`,
        agents: `${base}/v1/agents`,
        discover: `${base}/v1/discover?capability=triage.assess`,
        fhir: `${base}/fhir/metadata`,
        console: app.ward.computerUse.consoleOrigin(),
        docs: 'docs/api.md in the Ward repository (the API), docs/errors.md (every error code)',
      },
    };
  });
});
