import type { Redis } from 'ioredis';
import { SCOPES } from '../../core/call-context.ts';
import { buildDiagnostics } from './diagnostics.ts';
import type { InstanceHeartbeat } from './instance-heartbeat.ts';
import { buildOverview } from './overview.ts';
import type { TrafficStats } from './traffic-stats.ts';
import { Type } from 'typebox';
import { WardError } from '../../core/errors.ts';
import type { ServerMetrics } from '../../core/http/http-metrics.ts';
import { checkReadiness } from './readiness.ts';
import { errorResponses } from '../../contract/schemas/common.ts';
import { CallerSchema, DiagnosticsSchema, OverviewSchema } from '../../contract/schemas/operations-schemas.ts';
import { registryRoutePlugin } from '../http/route-plugin.ts';

export type OperationsRoutesOptions = {
  traffic: TrafficStats;
  heartbeat: InstanceHeartbeat;
  startedAt: Date;
  redis?: Redis | undefined;
  metrics: ServerMetrics;
  /** Whether the registry has begun to close. */
  draining: () => boolean;
};

const ProbeAnswer = Type.Object({ status: Type.Literal('ok') }, { title: 'Liveness' });
const livenessSchema = {
  tags: ['operations'],
  operationId: 'getLiveness',
  summary: 'Liveness: the process answers (public)',
  description: 'ok whenever the process can answer: for load balancers and orchestrators.',
  response: { 200: ProbeAnswer, ...errorResponses() },
};
const ReadyAnswer = Type.Object({
  status: Type.Literal('ready'),
  checks: Type.Record(Type.String(), Type.Object({ ok: Type.Boolean(), detail: Type.String() })),
}, { title: 'Readiness' });

/**
 * What operators and the admin console read about the registry itself (docs/console.md):
 * `GET /v1/caller` (who the credential is), `GET /v1/admin/overview` and `GET /v1/admin/diagnostics`.
 */
export const operationsRoutes = registryRoutePlugin<OperationsRoutesOptions>('ward-operations-routes', async (app, options) => {
  const ward = app.ward;
  const tags = ['operations'];

  app.get(
    '/livez',
    { schema: livenessSchema },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        tags,
        operationId: 'getReadiness',
        summary: 'Readiness: storage answers, migrations are current, Redis answers when configured, not shutting down (public)',
        description: '503 SERVICE_UNAVAILABLE with `details.checks` when any check fails.',
        response: { 200: ReadyAnswer, ...errorResponses(503) },
      },
    },
    async () => {
      const readiness = await checkReadiness({ storage: ward.storage, redis: options.redis, draining: options.draining });
      const failed = Object.entries(readiness.checks).filter(([, check]) => !check.ok);
      if (failed.length > 0) {
        throw new WardError('SERVICE_UNAVAILABLE', `Not ready: ${failed.map(([name, check]) => `${name} (${check.detail})`).join('; ')}.`, { checks: readiness.checks });
      }
      return { status: 'ready' as const, checks: readiness.checks };
    },
  );

  app.get(
    '/metrics',
    {
      schema: {
        tags,
        operationId: 'getMetrics',
        summary: 'Prometheus metrics (registry:admin when authentication is on)',
        description: 'Request, stream, cache and storage metrics in the Prometheus text exposition format (docs/operations.md).',
        response: { 200: { description: 'Prometheus text exposition', content: { 'text/plain': { schema: { type: 'string' } } } }, ...errorResponses(401, 403) },
      },
    },
    async (_request, reply) => {
      const { contentType, body } = await options.metrics.exposition();
      return reply.type(contentType).header('cache-control', 'no-store').send(body);
    },
  );

  app.get(
    '/v1/caller',
    {
      schema: {
        tags,
        operationId: 'getCaller',
        summary: 'Who the presented credential is: kind, id, organisation, scopes and tier',
        description: 'Public: without a credential the answer is the anonymous caller (every scope only when auth is disabled).',
        response: { 200: CallerSchema, ...errorResponses(401) },
      },
    },
    async (request) => {
      const { principal, scopes, pricingTier: tier } = request.caller;
      return {
        kind: principal.kind,
        credential_id: principal.credentialId,
        org_id: principal.orgId ?? null,
        scopes: SCOPES.filter((scope) => scopes.has(scope)),
        tier: tier?.name ?? null,
      };
    },
  );

  app.get(
    '/v1/admin/overview',
    {
      schema: {
        tags,
        operationId: 'getAdminOverview',
        summary: 'Agents, endpoint health, alerts material and request rates at a glance',
        description: 'What the console dashboard shows: agents by status and trust state, endpoints down or flapping, trust expiring, health over the last day and this instance\'s request rates.',
        response: { 200: OverviewSchema, ...errorResponses(401, 403) },
      },
    },
    async () =>
      buildOverview({
        storage: ward.storage,
        clock: ward.clock,
        traffic: options.traffic,
        instanceId: options.heartbeat.instanceId,
        degradedLatencyMs: Math.floor(ward.config.REGISTRY_HEALTH_TIMEOUT_MS / 2),
      }),
  );

  app.get(
    '/v1/admin/diagnostics',
    {
      schema: {
        tags,
        operationId: 'getDiagnostics',
        description: 'What an operator checks first: this instance\'s version and uptime, storage and migrations, event and ledger positions, live instances, Redis, the discovery cache and the effective configuration with secrets redacted.',
        summary: 'This instance: version, uptime, storage, event position, instances, Redis, cache, configuration (secrets redacted)',
        response: { 200: DiagnosticsSchema, ...errorResponses(401, 403) },
      },
    },
    async () =>
      buildDiagnostics({
        config: ward.config,
        storage: ward.storage,
        clock: ward.clock,
        startedAt: options.startedAt,
        ledger: ward.ledger,
        heartbeat: options.heartbeat,
        discoveryCacheStats: ward.discoveryAnswers.cacheStats,
        healthProber: ward.healthProber,
        registryId: ward.registryId,
        baseUrl: ward.baseUrl,
        ...(options.redis ? { redis: options.redis } : {}),
      }),
  );
});
