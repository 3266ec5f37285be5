/**
 * Hand-made A2A card servers on loopback for the from-card tests: each serves a card (signed or not,
 * as the test sets it) at `/.well-known/agent-card.json` and a JWKS at `/.well-known/jwks.json`, and
 * anything else a test routes.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TestContext } from 'node:test';
import { exportJWK, generateKeyPair, type CryptoKey, type JWK } from 'jose';
import { signAgentCard } from '../../../src/core/crypto/agent-card-signature.ts';
import { startServer } from '../credentials/fixtures.ts';

/** A card text carrying a name, a date of birth, an NHS number, an MRN, an SSN and a diagnosis (issue 41, finding 1). */
export const PHI_DESCRIPTION = 'Summary for patient Jane Smith, DOB 12/03/1980, NHS number 943 476 5919, MRN 00482913, SSN 123-45-6789: diagnosed with type 2 diabetes.';

export type CardKeyPair = { kid: string; privateKey: CryptoKey; jwk: JWK };

export async function cardKeyPair(kid: string): Promise<CardKeyPair> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  return { kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' } };
}

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

export type CardServer = {
  origin: string;
  cardUrl: string;
  jwksUrl: string;
  /** The card as served next (already signed, tampered, …: served as it is). */
  card: unknown;
  /** The keys the JWKS lists. */
  keys: JWK[];
  /** Other paths, or a replacement for the card path (status codes, redirects, sizes). */
  routes: Map<string, Handler>;
  hits: IncomingMessage[];
};

export async function startCardServer(t: Pick<TestContext, 'after'>): Promise<CardServer> {
  const state = { card: undefined as unknown, keys: [] as JWK[], routes: new Map<string, Handler>() };
  const server = await startServer(t, (request, response) => {
    const route = state.routes.get(request.url ?? '');
    if (route) return route(request, response);
    if (request.url === '/.well-known/agent-card.json' && state.card !== undefined) {
      return void response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(state.card));
    }
    if (request.url === '/.well-known/jwks.json') return void response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: state.keys }));
    response.writeHead(404).end();
  });
  const origin = server.baseUrl;
  return Object.assign(state, {
    origin,
    cardUrl: `${origin}/.well-known/agent-card.json`,
    jwksUrl: `${origin}/.well-known/jwks.json`,
    hits: server.hits,
  }) as CardServer;
}

/** An A2A 1.0 card whose interface is `origin`. */
export function cardFor(origin: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'Discharge summariser',
    description: 'Summarises discharge letters for GPs.',
    version: '2.1.0',
    supportedInterfaces: [{ url: `${origin}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    capabilities: { streaming: true, pushNotifications: false },
    securitySchemes: { oauth: { oauth2SecurityScheme: { flows: { clientCredentials: { tokenUrl: `${origin}/token`, scopes: { summarise: 'Summarise' } } } } } },
    securityRequirements: [{ schemes: { oauth: { list: ['summarise'] } } }],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: 'discharge.summarise', name: 'Summarise', description: 'Summarises a discharge letter.', tags: ['discharge'] }],
    ...overrides,
  };
}

/** `card` with one signature by `key`, its `jku` the given URL. */
export async function signed(card: Record<string, unknown>, key: CardKeyPair, jku: string): Promise<Record<string, unknown>> {
  const signature = await signAgentCard(card, { privateKey: key.privateKey, alg: 'ES256', kid: key.kid, jku });
  return { ...card, signatures: [signature] };
}

/** A card server that publishes `key` at its `jku` and serves `cardFor(origin, overrides)` signed by it. */
export async function startSignedCardServer(t: Pick<TestContext, 'after'>, key: CardKeyPair, overrides: Record<string, unknown> = {}): Promise<CardServer> {
  const server = await startCardServer(t);
  server.keys = [key.jwk];
  server.card = await signed(cardFor(server.origin, overrides), key, server.jwksUrl);
  return server;
}
