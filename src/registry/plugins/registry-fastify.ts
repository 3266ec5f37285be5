import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import type { DestinationStream } from 'pino';
import type { Config } from '../../core/config.ts';
import { serverLogger } from '../../core/http/http-kit.ts';
import { tlsServerOptions, watchCrl, type TlsFiles } from '../credentials/mtls.ts';
import { clientErrorBySurface, frameworkErrorsIn } from '../http/error-handler.ts';
import { fhirClientErrorSurface } from '../fhir/operation-outcome.ts';
import { sendOperationOutcome } from '../fhir/operation-outcome.ts';
import { requestIdFor } from '../http/request-context.ts';

/** Contract §2: bodies over 1 MiB are refused. */
export const BODY_LIMIT_BYTES = 1024 * 1024;

/** What the Fastify instance itself is made from: its configuration and where it logs. */
export type RegistryFastifyOptions = {
  config: Config;
  /** `false` silences logging (tests); otherwise pino at REGISTRY_LOG_LEVEL to stdout or `logStream`. */
  logger?: false;
  logStream?: DestinationStream;
};

/**
 * The registry's Fastify instance before any plugin: logging, body limit, request ids, routing
 * options and the error envelope of failures before routing. HTTPS when a certificate is configured;
 * in mtls mode the handshake also demands a client certificate chained to REGISTRY_MTLS_CA_FILE and
 * not revoked by REGISTRY_MTLS_CRL_FILE (watched, and reloaded when it changes).
 */
export function createRegistryFastify(options: RegistryFastifyOptions): FastifyInstance {
  const { config } = options;
  const tlsFiles: TlsFiles = {
    certFile: config.REGISTRY_TLS_CERT_FILE ?? '',
    keyFile: config.REGISTRY_TLS_KEY_FILE ?? '',
    ...(config.REGISTRY_AUTH_MODE === 'mtls' ? { caFile: config.REGISTRY_MTLS_CA_FILE as string } : {}),
    ...(config.REGISTRY_AUTH_MODE === 'mtls' && config.REGISTRY_MTLS_CRL_FILE ? { crlFile: config.REGISTRY_MTLS_CRL_FILE } : {}),
  };
  const app = Fastify({
    // One request line, from the HTTP kit, at the level REGISTRY_REQUEST_LOG sets (edge-plugin.ts).
    logController: new LogController({ disableRequestLogging: true }),
    logger: serverLogger(options.logger === false ? false : { level: config.REGISTRY_LOG_LEVEL, ...(options.logStream ? { stream: options.logStream } : {}) }),
    bodyLimit: BODY_LIMIT_BYTES,
    genReqId: (request) => requestIdFor(request.headers),
    requestIdHeader: false,
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 512 },
    ...(config.REGISTRY_TLS_CERT_FILE ? { https: tlsServerOptions(tlsFiles) } : {}),
    ajv: { customOptions: {} },
    // Failures before routing, and those of Node's HTTP parser, in the envelope too (error-handler.ts).
    frameworkErrors: frameworkErrorsIn({ '/fhir': sendOperationOutcome }),
    clientErrorHandler: clientErrorBySurface([fhirClientErrorSurface]),
  }).withTypeProvider<TypeBoxTypeProvider>();

  if (config.REGISTRY_TLS_CERT_FILE && tlsFiles.crlFile) {
    const stopWatching = watchCrl(app.server as never, tlsFiles, (message, error) => (error ? app.log.warn({ err: error }, message) : app.log.info(message)));
    app.addHook('onClose', async () => stopWatching());
  }
  return app;
}
