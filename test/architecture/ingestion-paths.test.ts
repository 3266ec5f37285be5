/**
 * Every way content enters the registry passes the one PHI guard (issue 41, finding 1; docs/security.md,
 * "Ways in"). The scan finds the ways in by reading src/registry's syntax trees, so a new one cannot
 * skip the guard unnoticed:
 *
 * - every file that reaches out (a call of `fetch`, `fetch…`, `…Fetch`, `readCard`, `ask…`, `post…`,
 *   `createFederationClient`) is named below with what it brings in and where that content is guarded;
 *   a file not named fails the test until someone decides;
 * - every table written (Kysely `insertInto`/`updateTable`, `insertRows`, SQL `insert into`/`update`) is
 *   named with what it holds; the tables holding an agent record are written only by the record stores,
 *   and each of their exported write functions calls `refusePhiContent` first;
 * - the PHI scan itself is called only at the HTTP edge (request bodies) and in storage/phi-boundary.ts.
 *
 * Files are named by their base name, so moving one into another folder keeps the test meaningful.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';

const ROOT = new URL('../..', import.meta.url).pathname;
const REGISTRY = join(ROOT, 'src/registry');

/** Callees that bring content in from elsewhere (the last name of `a.b.c(…)`). */
const REACHING_OUT = /^(?:fetch\w*|\w*Fetch|readCard|createFederationClient|ask[A-Z]\w*|post[A-Z]\w*)$/;

type Guard =
  /** The content becomes agent-record content: guarded where the record is written (agent-store.ts). */
  | { kind: 'record'; brings: string }
  /** The file takes foreign content in and passes it through storage/phi-boundary.ts itself. */
  | { kind: 'boundary'; brings: string }
  /** Not descriptive content: verified key sets, signed tokens, statuses; never served as record text. */
  | { kind: 'not-content'; brings: string }
  /** Reaches out only through another named file, which guards what comes back. */
  | { kind: 'delegates'; brings: string; to: string }
  /** Wiring only: builds the guarded fetch for the others. */
  | { kind: 'wiring'; brings: string };

const REACHING_FILES: Record<string, Guard> = {
  'card-reader.ts': { kind: 'record', brings: 'an A2A card (and its key sets) at registration and on re-read, mapped to the record' },
  'card-registrations.ts': { kind: 'record', brings: 'the card read, written as the agent record (register, re-read update)' },
  'child-discovery.ts': { kind: 'boundary', brings: "a child registry's discovery results, merged into this registry's answer" },
  'federated-discovery.ts': { kind: 'delegates', brings: 'the children\'s answers', to: 'child-discovery.ts' },
  'child-keys.ts': { kind: 'not-content', brings: "a child's JWKS and trust anchors (key material)" },
  'parent-grant.ts': { kind: 'not-content', brings: "the parent's signed grant" },
  'parent-link.ts': { kind: 'not-content', brings: "the parent's grant and status tokens" },
  'probe.ts': { kind: 'not-content', brings: "an agent endpoint's health answer (status and latency kept, never its body)" },
  'own-trust-chain.ts': { kind: 'not-content', brings: 'signed entity statements of the superiors (the own chain)' },
  'trust-chain-resolver.ts': { kind: 'not-content', brings: 'signed entity statements of a resolved chain (relayed in a signed answer, not stored)' },
  'subordinate-rollover.ts': { kind: 'not-content', brings: "a child's entity configuration (its keys)" },
  'parent-trust-marks.ts': { kind: 'not-content', brings: 'signed trust marks from the parent' },
  'resolve-trust-marks.ts': { kind: 'not-content', brings: 'trust mark status answers' },
  'superior-revocation.ts': { kind: 'not-content', brings: 'trust mark status answers' },
  'create-services.ts': { kind: 'wiring', brings: 'nothing: builds the guarded fetch' },
  'resolve-budget.ts': { kind: 'wiring', brings: 'nothing: charges the resolver\'s fetches to the caller\'s budget' },
  'phi-scan-pool.ts': { kind: 'wiring', brings: 'nothing from outside: posts a body to the PHI worker thread' },
  'phi-scan-worker.ts': { kind: 'wiring', brings: 'nothing from outside: posts the findings back' },
  'oidf-routes.ts': { kind: 'wiring', brings: 'nothing: builds the guarded fetch' },
};

/** Every table written outside the migrations, and what it holds. */
const TABLES: Record<string, string> = {
  agents: 'RECORD',
  agent_versions: 'RECORD',
  agent_skills: 'index tokens derived from the guarded record',
  agent_endpoints: 'protocol tokens derived from the guarded record',
  agent_cards: "a card's URL (request body), digest, kid and our own error text",
  events: 'event payloads built from guarded records and scanned request bodies',
  event_sequence: 'a counter',
  ledger_leaves: 'hashes of guarded records',
  ledger_nodes: 'hashes',
  registries: 'a child registry from a scanned request body, with its fetched key material',
  federation_state: 'signed statements, grants and trust marks (verified tokens)',
  signing_keys: "the registry's own keys",
  registry_secrets: "the registry's own secrets",
  api_keys: 'key hashes and names from scanned request bodies',
  idempotency_keys: 'answers of writes that passed the guards',
  usage_counts: 'counters',
  leases: 'lease holders',
  endpoint_health: 'probe status and latency',
  computer_use_runs: 'run state; free text through phi-boundary.ts (run-records.ts)',
  computer_use_turns: 'turns; page text and typed text through phi-boundary.ts (run-records.ts)',
  ward_migrations: 'migration names',
};
/** Where the record tables may be written. */
const RECORD_STORES = new Set(['agent-store.ts', 'agent-version-store.ts']);
/** The write functions of the record stores, each of which must call refusePhiContent. */
const RECORD_WRITES = ['insertAgent', 'replaceAgent'];
/** Where the PHI scan itself may be called. */
const SCANNERS = new Set(['phi-guard.ts', 'phi-scan-pool.ts', 'phi-scan-worker.ts', 'phi-boundary.ts']);

function* sources(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'migrations') yield* sources(path);
    } else if (entry.name.endsWith('.ts')) yield path;
  }
}

const calleeName = (call: ts.CallExpression): string => {
  const callee = call.expression;
  if (ts.isIdentifier(callee)) return callee.text;
  if (ts.isPropertyAccessExpression(callee)) return callee.name.text;
  return '';
};

function calls(tree: ts.SourceFile): ts.CallExpression[] {
  const found: ts.CallExpression[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node)) found.push(node);
    ts.forEachChild(node, visit);
  };
  visit(tree);
  return found;
}

/** The tables a file writes: Kysely builders, insertRows, and SQL text. */
function tablesWritten(tree: ts.SourceFile): string[] {
  const tables = new Set<string>();
  for (const call of calls(tree)) {
    const name = calleeName(call);
    const first = name === 'insertRows' ? call.arguments[1] : call.arguments[0];
    if (['insertInto', 'updateTable', 'insertRows'].includes(name) && first && ts.isStringLiteral(first)) tables.add(first.text);
  }
  const visit = (node: ts.Node): void => {
    if (ts.isTemplateExpression(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isStringLiteral(node)) {
      for (const match of node.getText(tree).matchAll(/\b(?:insert\s+into|update)\s+([a-z_]+)\b(?=[\s(])/gi)) {
        const table = (match[1] as string).toLowerCase();
        if (!['set', 'of'].includes(table) && /_|^agents$|^events$|^registries$|^leases$/.test(table)) tables.add(table);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(tree);
  return [...tables];
}

const files = [...sources(REGISTRY)].map((path) => {
  const text = readFileSync(path, 'utf8');
  return { path: relative(ROOT, path), name: basename(path), text, tree: ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS) };
});

test('every file of the registry that reaches out is named, with what it brings and where that is guarded', () => {
  const reaching = files.filter((file) => calls(file.tree).some((call) => REACHING_OUT.test(calleeName(call))));
  const unnamed = reaching.filter((file) => !(file.name in REACHING_FILES)).map((file) => file.path);
  assert.deepEqual(unnamed, [], 'a new way in: name it in REACHING_FILES and guard what it brings (docs/security.md, "Ways in")');
  assert.ok(reaching.length >= 10, `the scan finds the known ways in (${reaching.length})`);
  for (const file of reaching) {
    const guard = REACHING_FILES[file.name] as Guard;
    if (guard.kind === 'boundary') assert.match(file.text, /from '[./]*(?:storage\/)?phi-boundary\.ts'/, `${file.path} takes foreign content in: it must pass it through phi-boundary.ts`);
    if (guard.kind === 'delegates') assert.ok(['boundary', 'record'].includes(REACHING_FILES[guard.to]?.kind ?? ''), `${file.path} delegates to a guarded file`);
    if (guard.kind !== 'record') {
      assert.deepEqual(tablesWritten(file.tree).filter((table) => TABLES[table] === 'RECORD'), [], `${file.path} writes no record table itself`);
    }
  }
});

test('every table written is named; the record tables only by the record stores, whose writes call the guard first', () => {
  for (const file of files) {
    for (const table of tablesWritten(file.tree)) {
      assert.ok(table in TABLES, `${file.path} writes ${table}: name it in TABLES with what it holds, and guard it if it holds record content`);
      if (TABLES[table] === 'RECORD') assert.ok(RECORD_STORES.has(file.name), `${file.path} writes the record table ${table}: only the record stores may`);
    }
  }
  const store = files.find((file) => file.name === 'agent-store.ts');
  assert.ok(store, 'agent-store.ts is found');
  for (const name of RECORD_WRITES) {
    let body: ts.Node | undefined;
    const visit = (node: ts.Node): void => {
      if (ts.isFunctionDeclaration(node) && node.name?.text === name) body = node.body;
      ts.forEachChild(node, visit);
    };
    visit(store.tree);
    assert.ok(body, `${name} is in agent-store.ts`);
    const first = (body as ts.Block).statements.find((statement) => ts.isExpressionStatement(statement));
    assert.ok(first && ts.isCallExpression((first as ts.ExpressionStatement).expression) && calleeName((first as ts.ExpressionStatement).expression as ts.CallExpression) === 'refusePhiContent', `${name} calls refusePhiContent before it writes`);
  }
  // insertAgentVersion writes only what those two pass it.
  const versionWriters = files.filter((file) => calls(file.tree).some((call) => calleeName(call) === 'insertAgentVersion')).map((file) => file.name);
  assert.deepEqual(versionWriters, ['agent-store.ts']);
});

test('the PHI scan is called only at the HTTP edge and in phi-boundary.ts: one guard, no copies', () => {
  const scanning = files.filter((file) => /from '[./]+core\/phi\/(?:index|scan|detectors)\.ts'/.test(file.text) && /\bscan\w*ForPhi\b/.test(file.text)).map((file) => file.name);
  assert.deepEqual(scanning.filter((name) => !SCANNERS.has(name)), []);
  assert.ok(scanning.includes('phi-boundary.ts') && scanning.includes('phi-guard.ts'));
});
