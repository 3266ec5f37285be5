/**
 * No registry URL is built by hand outside src/client/ (issue 29): every call to a registry, this one
 * or another, goes through the typed client (src/client/registry-client.ts, federation-client.ts), so
 * its timeout, redirect policy, size cap, headers and error mapping are written once. The scan reads
 * each source file's syntax tree and looks at what is *requested*: the arguments of fetch-like calls
 * (`fetch`, `fetchImpl`, `request`, `http.get`…, a variable holding the URL followed to its
 * initialiser), `new URL(…)` and `new Request(…)`. Route declarations (`app.get('/v1/…')`), links a
 * registry publishes about itself (`jwks_uri`, `trust_bundle_url`) and text shown to people are not
 * requests, so they are not looked at. Agents' own endpoints (`/health`, `/.well-known/agent-card.json`)
 * are not registry paths.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, test } from 'node:test';
import ts from 'typescript';

const ROOT = new URL('../..', import.meta.url).pathname;

/** Paths only a registry serves: its API, its probes, its published keys and metadata. */
const REGISTRY_PATH = /\/(?:v1\/|v1\b|readyz\b|healthz\b|livez\b|metrics\b|\.well-known\/(?:jwks\.json|agent-registry|openid-federation))/;
/** Callees that send a request (the last name of `a.b.c(…)`). */
const REQUESTING_CALL = /^(?:fetch\w*|\w*Fetch|request|httpRequest|httpsRequest|get)$/;
/** Where a hand-built registry URL may stand. Empty, and it must stay so. */
const ALLOWED: readonly string[] = [];

type Finding = { file: string; line: number; text: string };

/** The hand-built registry requests in one file's text. */
function handBuiltRegistryRequests(file: string, source: string): Finding[] {
  const tree = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const initialisers = new Map<string, ts.Expression>();
  const findings: Finding[] = [];
  const collect = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer) initialisers.set(node.name.text, node.initializer);
    ts.forEachChild(node, collect);
  };
  collect(tree);

  /** The text an argument stands for: itself, and what a variable holding it was set to. */
  const textOf = (node: ts.Node, depth = 0): string => {
    const own = node.getText(tree);
    if (depth < 3 && ts.isIdentifier(node)) {
      const initialiser = initialisers.get(node.text);
      if (initialiser) return `${own} ${textOf(initialiser, depth + 1)}`;
    }
    // An object argument ({ url, path, origin }): its properties may hold variables too.
    if (depth < 3 && ts.isObjectLiteralExpression(node)) return node.properties.map((property) => textOf(property, depth + 1)).join(' ');
    if (depth < 3 && ts.isShorthandPropertyAssignment(node)) return textOf(node.name, depth + 1);
    if (depth < 3 && ts.isPropertyAssignment(node)) return textOf(node.initializer, depth + 1);
    return own;
  };
  const check = (node: ts.Node, args: readonly ts.Expression[]): void => {
    const text = args.map((argument) => textOf(argument)).join(' ');
    if (REGISTRY_PATH.test(text)) {
      findings.push({ file, line: tree.getLineAndCharacterOfPosition(node.getStart(tree)).line + 1, text: node.getText(tree).split('\n')[0] ?? '' });
    }
  };
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node)) {
      const callee = ts.isPropertyAccessExpression(node.expression) ? node.expression.name.text : ts.isIdentifier(node.expression) ? node.expression.text : '';
      // `app.get('/v1/…', …)` declares a route: a getter called on the app, with a path first.
      const isRouteDeclaration = callee === 'get' && ts.isPropertyAccessExpression(node.expression) && /^(?:app|fastify|instance|server|router)$/.test(node.expression.expression.getText(tree));
      if (REQUESTING_CALL.test(callee) && !isRouteDeclaration) check(node, node.arguments);
    }
    if (ts.isNewExpression(node) && ts.isIdentifier(node.expression) && (node.expression.text === 'URL' || node.expression.text === 'Request')) check(node, node.arguments ?? []);
    ts.forEachChild(node, visit);
  };
  visit(tree);
  return findings;
}

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

const FLAGGED_FIXTURE = `
export async function statusOf(base: string, sub: string, fetchImpl: typeof fetch) {
  const url = \`\${base.replace(/\\/+$/, '')}/v1/federation/status?sub=\${encodeURIComponent(sub)}\`;
  await fetchImpl(url, { headers: { accept: 'application/json' } });
  await fetch(\`\${base}/readyz\`);
  await fetch(new URL('/.well-known/jwks.json', base));
  await httpRequest({ host: 'registry', path: '/v1/agents' });
}
`;

const UNFLAGGED_FIXTURE = `
app.get('/v1/agents', async () => ({}));
fastify.get('/readyz', handler);
export const links = (base: string) => ({ jwks_uri: \`\${base}/.well-known/jwks.json\`, registration_endpoint: '/v1/agents' });
export async function agentUp(agentUrl: string) {
  await fetch(\`\${agentUrl}/health\`, { signal: AbortSignal.timeout(1000) });
  await fetch(\`\${agentUrl}/.well-known/agent-card.json\`);
  await client.readiness();
  new URL('../agents/manifest.json', import.meta.url);
}
`;

describe('registry URLs', () => {
  test('the scan flags a registry path requested by hand: a template literal, a variable holding it, new URL, an options object', () => {
    const lines = handBuiltRegistryRequests('fixture.ts', FLAGGED_FIXTURE).map((finding) => finding.line);
    assert.deepEqual(lines, [4, 5, 6, 6, 7]);
  });

  test('the scan passes route declarations, published links, agent endpoints and typed client calls', () => {
    assert.deepEqual(handBuiltRegistryRequests('fixture.ts', UNFLAGGED_FIXTURE), []);
  });

  test('no registry URL is built by hand outside src/client/, with no exception', () => {
    const findings = sourceFiles(join(ROOT, 'src'))
      .filter((path) => !relative(ROOT, path).startsWith('src/client/'))
      .flatMap((path) => handBuiltRegistryRequests(relative(ROOT, path), readFileSync(path, 'utf8')))
      .filter((finding) => !ALLOWED.includes(finding.file));
    assert.deepEqual(findings, [], 'call the registry through the typed client (src/client/) instead');
  });
});
