import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { TRUST_CHAIN_STEP, TRUST_MARKS_STEP, TRUST_MARK_STATUS_STEP, verifyTrustBundle, type TrustAnchorInput } from '../../client/trust/bundle-verifier.ts';
import { argumentsAfter, UsageError, type WardCommand } from '../command.ts';

const USAGE = `Usage: ward trust verify <bundle.json> --anchor <anchor.json> [--online] [--at <time>]

Verifies a trust bundle and its chain against the root's keys (docs/federation.md): the OpenID
Federation trust_chain when the bundle carries one, and Ward's delegation statements when it does:
  --anchor  the trust anchor: a JWKS as served at /.well-known/jwks.json, or
            {"jwks": {...}, "registry_id": "registry://…", "api_base_url": "https://…"}
  --online  also ask each statement's issuer whether its subject is still active
            (the first issuer at the anchor's api_base_url; an OIDF statement at the
            source_endpoint its issuer signed), and each trust mark's issuer whether the
            mark stands (its federation_trust_mark_status_endpoint); fails closed when it cannot
  --at      verify as of this RFC 3339 time instead of now
Exit status: 0 valid, 1 invalid, 2 usage (missing arguments, unreadable or invalid files).

Example:
  npx ward trust verify bundle.json --anchor anchor.json --online`;

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** `ward trust verify`: the offline (and optionally online) trust-chain verifier. */
export const trustCommand: WardCommand = {
  name: 'trust',
  usage: USAGE,
  async run(args) {
    const input = readInput(argumentsAfter('verify', args));
    const result = await verifyTrustBundle(input.bundle, input.anchor, input.at, input.online ? { online: {} } : {});
    console.log(report(input.bundle, result, input.online));
    return result.valid ? 0 : 1;
  },
};

function readInput(args: string[]) {
  const { values, positionals } = parseArgs({
    args,
    options: { anchor: { type: 'string' }, online: { type: 'boolean', default: false }, at: { type: 'string' } },
    allowPositionals: true,
    strict: true,
  });
  if (positionals.length !== 1) throw new UsageError('name exactly one bundle file');
  if (!values.anchor) throw new UsageError('--anchor is required');
  let at = new Date();
  if (values.at !== undefined) {
    at = new Date(values.at);
    if (!RFC3339.test(values.at) || Number.isNaN(at.getTime())) throw new UsageError(`--at takes an RFC 3339 time, not "${values.at}"`);
  }
  const anchor = toTrustAnchor(readJson(values.anchor));
  if (!anchor) throw new UsageError(`${values.anchor} is neither a JWKS ({"keys": [...]}) nor {"jwks": {...}, ...}`);
  return { bundle: readJson(positionals[0] as string), anchor, at, online: values.online };
}

function readJson(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${path}: ${(error as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new UsageError(`${path} is not valid JSON`);
  }
}

/** A bare JWKS or `{jwks, registry_id?, api_base_url?}`; `undefined` for anything else. */
function toTrustAnchor(value: unknown): TrustAnchorInput | undefined {
  if (!isObject(value)) return undefined;
  if (isJwks(value)) return { jwks: value };
  if (!isJwks(value.jwks)) return undefined;
  if (value.registry_id !== undefined && typeof value.registry_id !== 'string') return undefined;
  if (value.api_base_url !== undefined && typeof value.api_base_url !== 'string') return undefined;
  return {
    jwks: value.jwks,
    ...(value.registry_id !== undefined ? { registry_id: value.registry_id as string } : {}),
    ...(value.api_base_url !== undefined ? { api_base_url: value.api_base_url as string } : {}),
  };
}

function isJwks(value: unknown): value is TrustAnchorInput['jwks'] {
  return isObject(value) && Array.isArray(value.keys) && value.keys.every(isObject);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function report(bundle: unknown, result: Awaited<ReturnType<typeof verifyTrustBundle>>, online: boolean): string {
  const chain = isObject(bundle) && Array.isArray(bundle.delegation_chain) ? bundle.delegation_chain.map(String) : [];
  const oidf = result.steps.find((step) => step.name === TRUST_CHAIN_STEP);
  const lines = [
    `subject: ${result.subject ?? '(none)'}`,
    `chain:   ${chain.length > 0 ? chain.join('\n         → ') : '(none)'}`,
  ];
  if (oidf) lines.push(`oidf:    ${oidf.status === 'passed' ? 'OpenID Federation trust chain ' : 'OpenID Federation trust chain NOT valid: '}${oidf.detail}`);
  const marks = result.steps.find((step) => step.name === TRUST_MARKS_STEP);
  const markStatus = result.steps.find((step) => step.name === TRUST_MARK_STATUS_STEP);
  if (marks) lines.push(`marks:   ${marks.detail}`);
  if (markStatus) lines.push(`         status at the issuer: ${markStatus.detail}`);
  if (result.valid) {
    lines.push(`result:  valid${online ? ' (every statement confirmed active by its issuer)' : ' (offline)'}`);
  } else {
    const width = Math.max(...result.errors.map((e) => e.code.length));
    lines.push(`result:  INVALID (${result.errors.length} problem${result.errors.length === 1 ? '' : 's'})`);
    for (const error of result.errors) lines.push(`  ${error.code.padEnd(width)}  ${error.message}`);
  }
  return lines.join('\n');
}
