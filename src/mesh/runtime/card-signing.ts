/**
 * The key an agent signs its card with (A2A 1.0 §8.4) and the JWKS that publishes it. The key is the
 * agent's own, an EC P-256 private JWK at `<MESH_DATA_DIR>/agents/<alias>/card-signing-key.jwk`
 * (made on first start, mode 0600; delete it to rotate). Its public half is served at
 * `/.well-known/jwks.json` beside the card, and the card's signature names it by `kid` (the RFC 7638
 * thumbprint) and `jku` (that JWKS under the card's own interface URL), so whoever controls the
 * card's origin controls its key: docs/decisions.md 63 says why the registry trusts that.
 */
import { randomUUID } from 'node:crypto';
import { closeSync, fsyncSync, linkSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK, type KeyObject } from 'jose';
import { signAgentCard, type AgentCardSignature } from '../../core/crypto/agent-card-signature.ts';

/** An agent's card key: the private key to sign with and the public JWK to publish. */
export type CardKey = {
  readonly privateKey: CryptoKey | KeyObject;
  readonly publicJwk: JWK & { kid: string; alg: string };
};

export const CARD_KEY_FILE = 'card-signing-key.jwk';
const ALG = 'ES256';

/** A card key from a private JWK (its `kid` the RFC 7638 thumbprint unless it names one). */
export async function cardKeyFromJwk(jwk: JWK): Promise<CardKey> {
  const alg = jwk.alg ?? ALG;
  const { d: _private, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...publicPart } = jwk;
  const kid = jwk.kid ?? (await calculateJwkThumbprint(publicPart));
  return { privateKey: (await importJWK(jwk, alg)) as CryptoKey | KeyObject, publicJwk: { ...publicPart, kid, alg, use: 'sig' } };
}

/** A new EC P-256 card key, as its private JWK (extractable, to be written down). */
export async function newCardKeyJwk(): Promise<JWK> {
  const { privateKey } = await generateKeyPair(ALG, { extractable: true });
  const jwk = await exportJWK(privateKey);
  return { ...jwk, alg: ALG };
}

/** How often, and how long apart, a key file that does not parse is read again before giving up. */
const READ_ATTEMPTS = 10;
const READ_RETRY_MS = 50;

/**
 * The key in `file`; undefined when there is none. A file that does not hold a key is read again a
 * few times (a writer of the old kind may be between creating and filling it), then refused with an
 * error naming the file: it is left for an operator, never replaced (it may be the key a registry knows).
 */
async function readKeyFile(file: string): Promise<CardKey | undefined> {
  let failure: unknown;
  for (let attempt = 0; attempt < READ_ATTEMPTS; attempt += 1) {
    if (attempt > 0) await delay(READ_RETRY_MS);
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    try {
      return await cardKeyFromJwk(JSON.parse(text) as JWK);
    } catch (error) {
      failure = error;
    }
  }
  throw new Error(`${file} does not hold a card signing key (a private JWK): ${(failure as Error).message}. Remove the file to make a new key.`, { cause: failure });
}

/**
 * The agent's card key from its data directory, made there on first use. The new key is written in
 * full (and flushed) to a file of its own in the same directory, then linked to its name: the link
 * fails atomically when the name exists, so a reader never sees a partial key and a crash never leaves
 * one. Two processes starting at once both try; the one that loses reads the winner's.
 */
export async function loadCardKey(agentDir: string): Promise<CardKey> {
  const file = join(agentDir, CARD_KEY_FILE);
  const existing = await readKeyFile(file);
  if (existing) return existing;
  const jwk = await newCardKeyJwk();
  const temp = join(agentDir, `.${CARD_KEY_FILE}.${process.pid}.${randomUUID()}.tmp`);
  try {
    const fd = openSync(temp, 'wx', 0o600);
    try {
      writeSync(fd, JSON.stringify(jwk));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    linkSync(temp, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const winner = await readKeyFile(file);
    if (!winner) throw new Error(`${file} was made by another process and then removed while this one started`, { cause: error });
    return winner;
  } finally {
    rmSync(temp, { force: true });
  }
  return cardKeyFromJwk(jwk);
}

/** The JWKS URL for a card whose interface is `url`: `<url>/.well-known/jwks.json`, on the card's origin. */
export function cardJwksUrl(url: string): string {
  const base = new URL(url);
  base.pathname = `${base.pathname.replace(/\/+$/, '')}/.well-known/jwks.json`;
  base.search = '';
  base.hash = '';
  return base.toString();
}

/**
 * A signer of cards with `key`, keeping the last few signatures (a card changes only with its URL or
 * the caller's A2A version, and cards are read often: health probes, clients, the registry).
 */
export function createCardSigner(key: CardKey): (card: Record<string, unknown>, url: string) => Promise<AgentCardSignature> {
  const kept = new Map<string, AgentCardSignature>();
  return async (card, url) => {
    const memo = JSON.stringify(card);
    const known = kept.get(memo);
    if (known) return known;
    const signature = await signAgentCard(card, { privateKey: key.privateKey, alg: key.publicJwk.alg, kid: key.publicJwk.kid, jku: cardJwksUrl(url) });
    if (kept.size >= 16) kept.delete(kept.keys().next().value as string);
    kept.set(memo, signature);
    return signature;
  };
}
