/**
 * This registry's own OpenID Federation trust chain to the top of its federation (OIDF §4), for the
 * trust bundles it issues (docs/federation.md, "One chain"): its entity configuration, signed here, then
 * each superior's subordinate statement about the entity below it, read from the superiors' fetch
 * endpoints up the `authority_hints`, and the top entity's configuration. The chain is validated
 * (OIDF §10.2, the top's keys as its own configuration states them: the verifier pins the root's keys
 * itself) before it is served. It is rebuilt when a third of its earliest statement's life has passed,
 * when this registry signs with another key (a rotation), when its Ward grant changed (a superior
 * rotated, or issued a new statement), and
 * at most once per {@link RETRY_MS} while a superior fails; a chain that expired is never served.
 * Without a parent there is none: the registry is its own trust anchor, whose keys a verifier holds
 * already, and its bundles verify with them alone.
 */
import { decodeJwt } from 'jose';
import type { EntityStatementClaims } from '../../contract/openid-federation.ts';
import { fetchEntityConfiguration, fetchSubordinateStatement } from '../../client/openid-federation-client.ts';
import { readEntityStatement, validateTrustChain } from '../../client/oidf/trust-chain-validation.ts';
import { ownEntityId, parentEntityId, signEntityConfiguration } from './entity-configuration.ts';
import type { OidfDeps } from './oidf-deps.ts';

const RETRY_MS = 10_000;
const MAX_DEPTH = 5;

type ChainDeps = Pick<OidfDeps, 'config' | 'clock' | 'signer' | 'registryId' | 'baseUrl' | 'heldTrustMarks' | 'fetch'>;
type Held = { chain: string[]; iat: number; exp: number; kid: string; grant: string };

/** Returns a function answering the chain now (undefined when none can be had); it never throws. */
export function createOwnTrustChain(
  deps: ChainDeps & {
    /** Changes whenever the Ward grant from the parent does (a superior's rotation or new statement): the chain is rebuilt then too. */
    grantVersion(): string;
  },
  log: (message: string, error?: unknown) => void = () => {},
): () => Promise<string[] | undefined> {
  let held: Held | undefined;
  let retryAt = 0;
  let inFlight: Promise<void> | undefined;

  const due = (nowMs: number) => !held || held.kid !== deps.signer.kid || held.grant !== deps.grantVersion() || nowMs >= (held.iat + (held.exp - held.iat) / 3) * 1000;

  async function refresh(): Promise<void> {
    try {
      const grant = deps.grantVersion();
      const chain = await buildChain(deps);
      const claims = chain.map((jwt) => decodeJwt(jwt));
      const iat = Math.max(...claims.map((c) => c.iat as number));
      held = { chain, iat, exp: Math.min(...claims.map((c) => c.exp as number)), kid: deps.signer.kid, grant };
      retryAt = 0;
    } catch (error) {
      retryAt = deps.clock.now().getTime() + RETRY_MS;
      log('building the OpenID Federation trust chain failed', error);
    }
  }

  return async () => {
    if (!parentEntityId(deps)) return undefined;
    const nowMs = deps.clock.now().getTime();
    if (due(nowMs) && nowMs >= retryAt) {
      inFlight ??= refresh().finally(() => {
        inFlight = undefined;
      });
      await inFlight;
    }
    return held && held.exp * 1000 > deps.clock.now().getTime() ? held.chain : undefined;
  };
}

/** Builds and validates the chain; throws naming what failed. */
async function buildChain(deps: ChainDeps): Promise<string[]> {
  const own = await signEntityConfiguration(deps);
  const options = { fetch: deps.fetch, timeoutMs: deps.config.REGISTRY_FEDERATION_TIMEOUT_MS };
  const statements: string[] = [];
  let subject = ownEntityId(deps);
  let hints = readEntityStatement(own, 'this registry’s entity configuration').authority_hints ?? [];
  for (let depth = 0; ; depth += 1) {
    const superiorId = hints[0];
    if (!superiorId) throw new Error(`${subject} names no superior`);
    if (depth >= MAX_DEPTH) throw new Error(`no top within ${MAX_DEPTH} superiors`);
    const configuration = await fetchEntityConfiguration(superiorId, options);
    if (!configuration.ok) throw new Error(configuration.message);
    const superior: EntityStatementClaims = readEntityStatement(configuration.jwt, `the entity configuration of ${superiorId}`);
    const fetchEndpoint = superior.metadata?.federation_entity?.federation_fetch_endpoint;
    if (typeof fetchEndpoint !== 'string') throw new Error(`${superiorId} publishes no federation_fetch_endpoint`);
    const statement = await fetchSubordinateStatement(fetchEndpoint, subject, options);
    if (!statement.ok) throw new Error(statement.message);
    statements.push(statement.jwt);
    if (!superior.authority_hints || superior.authority_hints.length === 0) {
      const chain = [own, ...statements, configuration.jwt];
      await validateTrustChain(chain, superior.sub, undefined, deps.clock.now());
      return chain;
    }
    subject = superior.sub;
    hints = superior.authority_hints;
  }
}
