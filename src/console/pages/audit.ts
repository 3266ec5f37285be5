/**
 * `/audit`: the transparency ledger (contract §6, docs/transparency.md), checked by the console
 * itself rather than taken on the registry's word. The signed tree head is verified on the console's
 * server against the registry's published keys (`verifySignedTreeHead`); the entries are listed page
 * by page; any entry's inclusion in the signed tree is proved step by step on
 * `/audit/entries/<leaf index>` (the console hashes the entry's text itself and walks the registry's
 * proof up to the signed root); and the current head is checked to extend an earlier head this
 * console verified while it was current (`auditLedger` with `previousVerified`: its size and root, not
 * its signature again, so a key rotated away since does not fail it; why the console keeps those:
 * ./audit-memory.ts).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { JWK } from 'jose';
import type { RegistryAnswer, RegistryClient } from '../../client/registry-client.ts';
import { hashFromHex, hashLeaf, sameHash, toHex } from '../../core/crypto/merkle.ts';
import { auditLedger, type LedgerAuditReport } from '../../client/ledger-audit.ts';
import { TreeHeadError, verifyInclusion, verifySignedTreeHead, type VerifiedTreeHead } from '../../client/ledger-verifier.ts';
import { STH_JWS_TYPE } from '../../core/ledger-entry.ts';
import { html, type View } from '../views/html.ts';
import { Badge, Empty, Facts, Pager, Problem, Section, Time, count } from '../views/parts.ts';
import { sendPage } from '../views/send-page.ts';
import { findHead, headKey, MAX_HEADS, recordedHeads, rememberHead, type RecordedHead } from './audit-memory.ts';
import { agentNames, SubjectName } from './agent-names.ts';
import { walkInclusion } from './audit-proof.ts';
import { credentialRefused, failureStatus, firstFailure, selfUrl, signInAgain, text } from './page-kit.ts';

const PAGE_SIZE = 25;

type AuditQuery = { cursor?: string; start?: string; from?: string };
type TreeHeadBody = Extract<Awaited<ReturnType<RegistryClient['treeHead']>>, { ok: true }>['body'];
type LedgerEntry = Extract<Awaited<ReturnType<RegistryClient['ledgerEntries']>>, { ok: true }>['body']['entries'][number];

/** The tree head as the console judged it. */
type HeadCheck = { document: TreeHeadBody; verified: VerifiedTreeHead } | { document: TreeHeadBody; failure: string };

/** What a ledger leaf says (canonical JSON of the committed event), or undefined when it is not that. */
type LeafContent = { seq?: unknown; type?: unknown; subject?: unknown; occurred_at?: unknown; data?: unknown };

export function registerAuditPage(app: FastifyInstance): void {
  app.get<{ Querystring: AuditQuery }>('/audit', async (request, reply) => auditPage(request, reply));
  app.get<{ Params: { index: string } }>('/audit/entries/:index', async (request, reply) => {
    const { index } = request.params;
    if (!/^\d{1,15}$/.test(index)) return reply.callNotFound();
    return entryPage(request, reply, Number(index));
  });
}

/**
 * Verifies the signed tree head against the JWKS, in the console's process, and remembers it when it
 * holds (only verified heads are ever remembered).
 */
async function checkHead(registry: RegistryClient, jwks: RegistryAnswer<{ keys: Array<Record<string, unknown>> }>, sth: RegistryAnswer<TreeHeadBody>): Promise<HeadCheck | undefined> {
  if (!sth.ok || !jwks.ok) return undefined;
  try {
    const verified = await verifySignedTreeHead(sth.body, jwks.body as { keys: JWK[] });
    rememberHead(registry.baseUrl, verified);
    return { document: sth.body, verified };
  } catch (error) {
    return { document: sth.body, failure: error instanceof TreeHeadError ? error.message : String(error) };
  }
}

const short = (hex: string) => `${hex.slice(0, 10)}…`;

/** A hash shown short, the whole of it on hover and to assistive technology. */
function Hash({ hex, full = false }: { hex: string; full?: boolean }): View {
  return full ? html`<code>${hex}</code>` : html`<code title=${hex}>${short(hex)}</code>`;
}

function parseLeaf(leaf: string): LeafContent | undefined {
  try {
    const parsed = JSON.parse(leaf) as unknown;
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as LeafContent) : undefined;
  } catch {
    return undefined;
  }
}

/** The subject an entry is about, if it names one. */
const subjectIn = (content: LeafContent | undefined): string | undefined => (typeof content?.subject === 'string' ? content.subject : undefined);

/**
 * The subject, an agent by its name (resolved through the registry: the ledger keeps identifiers, and
 * digests of free text, never names) linked to its page, with its id beneath.
 */
function Subject({ content, names }: { content: LeafContent | undefined; names: ReadonlyMap<string, string> }): View {
  const subject = subjectIn(content);
  if (!subject) return html`<span class="muted">—</span>`;
  if (/^registry:\/\/[a-z]{2}\/agents\/[0-9A-Z]{26}$/i.test(subject)) return html`<${SubjectName} subject=${subject} name=${names.get(subject)} />`;
  return html`<code>${subject}</code>`;
}

/** The names of the agents these entries are about. */
const namesFor = (registry: RegistryClient, leaves: readonly string[]) =>
  agentNames(registry, leaves.map((leaf) => subjectIn(parseLeaf(leaf))).filter((subject): subject is string => subject !== undefined));

function HeadReport({ check }: { check: HeadCheck }): View {
  const doc = check.document;
  if ('failure' in check) {
    return html`<div data-verdict="failed">
      <p><${Badge} state="failed" label="Tree head NOT verified" /></p>
      <p class="problem" role="alert">${check.failure}. Nothing this registry's ledger says can be relied on until its head verifies.</p>
      <${Facts} items=${[['Tree size (claimed)', count(doc.tree_size)], ['Root hash (claimed)', html`<${Hash} hex=${doc.root_hash} full />`], ['Timestamp (claimed)', html`<${Time} at=${doc.timestamp} />`]]} />
    </div>`;
  }
  const { verified } = check;
  return html`<div data-verdict="verified">
    <p><${Badge} state="verified" label="Tree head verified" /> Signed by the registry's key <code>${verified.kid ?? '?'}</code>, checked by the console against the registry's published keys.</p>
    <${Facts} items=${[
      ['Tree size', html`<span data-tree-size=${verified.treeSize}>${count(verified.treeSize)} entries</span>`],
      ['Signed at', html`<${Time} at=${verified.timestamp} />`],
      ['Key id (kid)', html`<code>${verified.kid ?? '—'}</code>`],
      ['Root hash', html`<${Hash} hex=${toHex(verified.rootHash)} full />`],
    ]} />
    <p class="muted small">The JWS (typ <code>${STH_JWS_TYPE}</code>) verifies with a key from <code>/.well-known/jwks.json</code> and signs exactly this size, root and time.</p>
  </div>`;
}

/** A recorded head in a few words (narrow screens); the root is named only when two heads share a size (a fork). */
const headLabel = (head: RecordedHead, all: readonly RecordedHead[]) =>
  `${count(head.tree_size)} entries, ${head.timestamp.slice(0, 10)} ${head.timestamp.slice(11, 19)} UTC${all.filter((other) => other.tree_size === head.tree_size).length > 1 ? `, root ${head.root_hash.slice(0, 8)}…` : ''}`;

/** Text with its long tokens (hashes, key ids) as code, so they can wrap on a narrow screen. */
function Detail({ text: detail }: { text: string }): View {
  return detail.split(/(\S{24,})/).map((part, i) => (i % 2 === 1 ? html`<code>${part}</code>` : part));
}

function ConsistencyReport({ report, from }: { report: LedgerAuditReport; from: RecordedHead }): View {
  const consistency = report.checks.find((check) => check.name.startsWith('consistency'));
  const ok = report.ok && consistency?.ok === true;
  return html`<div id="consistency-result" data-verdict=${ok ? 'verified' : 'failed'}>
    <p>${ok
      ? html`<${Badge} state="verified" label="Consistent" /> The current log extends the head of ${count(from.tree_size)} entries signed <${Time} at=${from.timestamp} />${from.kid ? html` by key <code>${from.kid}</code>` : ''}: nothing recorded by then was changed, dropped or reordered.`
      : html`<${Badge} state="failed" label="Consistency FAILED" /> <strong role="alert"><${Detail} text=${consistency ? consistency.detail : 'The check could not be completed.'} /></strong>`}</p>
    <ul>
      ${report.checks.map((check) => html`<li><${Badge} state=${check.ok ? 'ok' : 'failed'} label=${check.ok ? 'ok' : 'FAILED'} /> <strong>${check.name}</strong>: <${Detail} text=${check.detail} /></li>`)}
    </ul>
  </div>`;
}

async function auditPage(request: FastifyRequest<{ Querystring: AuditQuery }>, reply: FastifyReply) {
  const cursor = text(request.query.cursor);
  const startText = text(request.query.start);
  const start = startText !== undefined && /^\d{1,15}$/.test(startText) ? Number(startText) : undefined;
  const from = text(request.query.from);
  const registry = request.registry;
  const [jwks, sth, entries] = await Promise.all([
    registry.jwks(),
    registry.treeHead(),
    registry.ledgerEntries(cursor ? { cursor, limit: PAGE_SIZE } : { start: start ?? 0, limit: PAGE_SIZE }),
  ]);
  if (credentialRefused(request, jwks, sth, entries)) return signInAgain(request, reply);
  const [head, names] = await Promise.all([checkHead(registry, jwks, sth), namesFor(registry, entries.ok ? entries.body.entries.map((entry) => entry.leaf) : [])]);

  // The consistency check, when one was asked for: from a head this console verified earlier. A live
  // refresh (htmx) swaps only the head and the entries, so it does not run the check again.
  const previous = from ? findHead(registry.baseUrl, from) : undefined;
  let report: LedgerAuditReport | undefined;
  if (previous && !request.headers['hx-request']) {
    // Through this session's client, as the alert rules do.
    report = await auditLedger({ registry, previousVerified: { treeSize: previous.tree_size, rootHash: previous.root_hash } });
    if (report.ok && report.verified) rememberHead(registry.baseUrl, report.verified);
  }
  const currentKey = head && 'verified' in head ? headKey(head.document) : undefined;
  const heads = [...recordedHeads(registry.baseUrl)].reverse();
  const earlier = heads.filter((recorded) => recorded.key !== currentKey);
  const headFailure = firstFailure(jwks, sth);
  const live = selfUrl(request);
  const href = (next: string | undefined) => (next ? `/audit?cursor=${encodeURIComponent(next)}` : '/audit');
  const latestStart = entries.ok ? Math.max(0, entries.body.tree_size - PAGE_SIZE) : 0;

  return sendPage(
    request,
    reply,
    { page: 'audit', title: 'Audit', live: true, status: headFailure ? failureStatus(headFailure) : entries.ok ? 200 : failureStatus(entries) },
    html`
      <p class="muted">The registry's transparency ledger: an append-only Merkle tree (RFC 9162) of every change made to the registry. The console checks it itself: the signed head against the registry's keys, any entry's inclusion in it, and that the log only grows.</p>
      <${Section} id="audit-head" title="Signed tree head" live=${live}>
        ${headFailure ? html`<${Problem} envelope=${headFailure.envelope} status=${headFailure.status} />` : head && html`<${HeadReport} check=${head} />`}
      <//>
      <${Section} id="audit-consistency" title="Consistency with an earlier head">
        <p class="muted small">The registry signs only its current head, so the console remembers each head it has verified (in memory, until it restarts) and can prove the current log extends any of them.</p>
        ${from && !previous && html`<p class="problem" role="alert">This console does not remember the head <code>${from}</code> (it forgets them on restart, and keeps the last ${MAX_HEADS} only). Choose one below.</p>`}
        ${earlier.length === 0
          ? html`<${Empty}>${currentKey
              ? 'No earlier head yet: this console has verified only the current one. It records each head it verifies; once the ledger has grown, an earlier head can be checked against the current one here.'
              : 'No head verified yet: the current head could not be read or did not verify, so there is nothing to check consistency from.'}<//>`
          : html`<form method="get" action="/audit" class="filters" aria-label="Check consistency">
              <div>
                <label for="from">Earlier tree head</label>
                <select id="from" name="from" required>
                  ${earlier.map((recorded) => html`<option value=${recorded.key} selected=${recorded.key === from}>${headLabel(recorded, heads)}</option>`)}
                </select>
              </div>
              <div class="actions"><button type="submit">Check consistency</button></div>
            </form>`}
        ${report && previous && html`<${ConsistencyReport} report=${report} from=${previous} />`}
      <//>
      <${Section} id="audit-entries" title=${entries.ok ? `Entries (${count(entries.body.tree_size)} in all)` : 'Entries'} live=${live}
        actions=${entries.ok && entries.body.tree_size > PAGE_SIZE ? html`<a href=${`/audit?start=${latestStart}`}>Latest entries</a>` : undefined}>
        <form method="get" action="/audit" class="filters" aria-label="Go to a leaf index">
          <div><label for="start">From leaf index</label><input id="start" name="start" type="number" min="0" value=${start ?? ''} size="8" /></div>
          <div class="actions"><button type="submit" class="secondary">Show</button></div>
        </form>
        ${!entries.ok
          ? html`<${Problem} envelope=${entries.envelope} status=${entries.status} />`
          : entries.body.entries.length === 0
            ? html`<${Empty}>${entries.body.tree_size === 0 ? 'The ledger is empty: nothing has changed in this registry yet. Each registration, update, status change and key event will appear here.' : `No entry at or after leaf index ${start ?? 0}; the ledger has ${entries.body.tree_size}.`}<//>`
            : html`<${EntryTable} entries=${entries.body.entries} names=${names} />`}
        ${entries.ok && html`<${Pager} next=${entries.body.next_cursor} first=${!cursor && !start} href=${href} label="Ledger entries" />`}
      <//>
    `,
  );
}

function EntryTable({ entries, names }: { entries: readonly LedgerEntry[]; names: ReadonlyMap<string, string> }): View {
  const parsed = entries.map((entry) => ({ entry, content: parseLeaf(entry.leaf) }));
  return html`<div class="table-wrap"><table>
    <caption class="muted small">In leaf order (commit order). Select "Check inclusion" to prove an entry is in the signed tree.</caption>
    <thead><tr><th scope="col" class="num">Leaf</th><th scope="col" class="num hide-narrow">Seq</th><th scope="col">Type</th><th scope="col">Subject</th><th scope="col" class="hide-narrow">Time</th><th scope="col" class="hide-narrow">Leaf hash</th><th scope="col">Proof</th></tr></thead>
    <tbody>${parsed.map(({ entry, content }) => {
      return html`<tr data-leaf-index=${entry.leaf_index}>
        <td class="num">${entry.leaf_index}</td>
        <td class="num hide-narrow">${entry.seq}</td>
        <td>${typeof content?.type === 'string' ? html`<code>${content.type}</code>` : html`<span class="muted">unreadable</span>`}</td>
        <td><${Subject} content=${content} names=${names} /></td>
        <td class="hide-narrow">${typeof content?.occurred_at === 'string' ? html`<${Time} at=${content.occurred_at} />` : '—'}</td>
        <td class="hide-narrow"><${Hash} hex=${entry.leaf_hash} /></td>
        <td><a href=${`/audit/entries/${entry.leaf_index}`} aria-label=${`Check inclusion of leaf ${entry.leaf_index}`}>Check inclusion</a></td>
      </tr>`;
    })}</tbody>
  </table></div>`;
}

async function entryPage(request: FastifyRequest, reply: FastifyReply, index: number) {
  const registry = request.registry;
  const title = `Ledger entry ${index}`;
  const [jwks, sth, page] = await Promise.all([registry.jwks(), registry.treeHead(), registry.ledgerEntries({ start: index, limit: 1 })]);
  if (credentialRefused(request, jwks, sth, page)) return signInAgain(request, reply);
  const back = html`<p><a href="/audit">← The ledger</a></p>`;
  const failed = firstFailure(jwks, sth, page);
  if (failed) return sendPage(request, reply, { page: 'audit', title, status: failureStatus(failed) }, html`${back}<${Problem} envelope=${failed.envelope} status=${failed.status} />`);
  const entry = page.ok ? page.body.entries.find((candidate) => candidate.leaf_index === index) : undefined;
  if (!entry) {
    return sendPage(request, reply, { page: 'audit', title, status: 404 }, html`${back}<p role="alert">There is no entry at leaf index ${index}: the ledger has ${page.ok ? count(page.body.tree_size) : 'no'} entries, numbered from 0.</p>`);
  }
  const [head, names] = await Promise.all([checkHead(registry, jwks, sth), namesFor(registry, [entry.leaf])]);
  const content = parseLeaf(entry.leaf);
  const leafHash = hashLeaf(new TextEncoder().encode(entry.leaf));
  const leafHex = toHex(leafHash);

  let proofView: View;
  let verdict: { ok: boolean; why: string };
  if (!head || 'failure' in head) {
    verdict = { ok: false, why: `the signed tree head does not verify (${head && 'failure' in head ? head.failure : 'it could not be read'}), so there is no trusted root to prove inclusion in` };
    proofView = null;
  } else if (index >= head.verified.treeSize) {
    verdict = { ok: false, why: `the entry was appended after the head was signed (size ${head.verified.treeSize}); reload to prove it against a newer head` };
    proofView = null;
  } else {
    const { verified } = head;
    const proof = await registry.inclusionProof({ leaf_index: index, tree_size: verified.treeSize });
    if (credentialRefused(request, proof)) return signInAgain(request, reply);
    if (!proof.ok) {
      verdict = { ok: false, why: `the registry gave no inclusion proof (${proof.envelope.error.code}: ${proof.envelope.error.message})` };
      proofView = html`<${Problem} envelope=${proof.envelope} status=${proof.status} />`;
    } else {
      const hashes = proof.body.inclusion_path.map((hex) => hashFromHex(hex));
      const path = hashes.every((hash) => hash !== undefined) ? (hashes as Uint8Array[]) : undefined;
      const included = path !== undefined && verifyInclusion(leafHash, index, verified.treeSize, path, verified.rootHash);
      const walk = path ? walkInclusion(leafHash, index, verified.treeSize, path) : { steps: [], root: undefined, problem: 'the proof holds a value that is not a SHA-256 hash' };
      const rootHex = toHex(verified.rootHash);
      verdict = included
        ? { ok: true, why: `the hash of the entry's text, combined with the registry's ${path.length}-step proof, gives exactly the signed root of ${count(verified.treeSize)} entries` }
        : {
            ok: false,
            why: walk.root
              ? `the entry as served is not the one the signed tree contains: it was altered. Its text leads to root ${short(toHex(walk.root))}, not the signed ${short(rootHex)}`
              : `the proof does not fit the tree: ${walk.problem ?? 'it is malformed'}`,
          };
      proofView = html`
        <li>
          <h3>The registry's inclusion proof</h3>
          <p><code>GET /v1/transparency/proof/inclusion?leaf_index=${index}&tree_size=${verified.treeSize}</code> gave ${proof.body.inclusion_path.length} sibling hash${proof.body.inclusion_path.length === 1 ? '' : 'es'}, nearest the leaf first. Each step hashes <code>0x01 ‖ left ‖ right</code>.</p>
          ${walk.steps.length === 0
            ? html`<p class="muted">No step: the tree has a single entry, so its leaf hash is the root.</p>`
            : html`<div class="table-wrap"><table id="proof-steps">
                <thead><tr><th scope="col" class="num">Step</th><th scope="col">Sibling hash</th><th scope="col" class="hide-narrow">Covers leaves</th><th scope="col">Sibling goes</th><th scope="col">Result</th></tr></thead>
                <tbody>${walk.steps.map((step, i) => html`<tr>
                  <td class="num">${i + 1}</td>
                  <td><${Hash} hex=${toHex(step.sibling)} /></td>
                  <td class="hide-narrow">${step.covers ? (step.covers.end - step.covers.start === 1 ? `${step.covers.start}` : `${step.covers.start}–${step.covers.end - 1}`) : '—'}</td>
                  <td>${step.side}</td>
                  <td><${Hash} hex=${toHex(step.result)} /></td>
                </tr>`)}</tbody>
              </table></div>`}
        </li>
        <li>
          <h3>Compare with the signed root</h3>
          <${Facts} items=${[
            ['Root computed here', walk.root ? html`<${Hash} hex=${toHex(walk.root)} full />` : html`<span class="muted">none: ${walk.problem ?? 'the walk failed'}</span>`],
            ['Signed root', html`<${Hash} hex=${rootHex} full />`],
          ]} />
          <p>${walk.root && sameHash(walk.root, verified.rootHash) ? 'They are the same.' : 'They differ.'}</p>
        </li>`;
    }
  }

  const served = entry.leaf_hash.toLowerCase();
  return sendPage(
    request,
    reply,
    { page: 'audit', title },
    html`
      ${back}
      <${Section} id="inclusion" title="Inclusion in the signed tree">
        <div id="inclusion-verdict" data-verdict=${verdict.ok ? 'verified' : 'failed'}>
          ${verdict.ok
            ? html`<p><${Badge} state="verified" label="Inclusion verified" /> Leaf ${index} is in the signed tree: ${verdict.why}.</p>`
            : html`<p role="alert"><${Badge} state="failed" label="Inclusion FAILED" /> Leaf ${index} could not be proved: ${verdict.why}.</p>`}
        </div>
      <//>
      <${Section} id="inclusion-steps" title="How the console checked it">
        <ol class="stack">
          <li>
            <h3>The signed tree head</h3>
            ${head ? html`<${HeadReport} check=${head} />` : html`<p class="muted">Not available.</p>`}
          </li>
          <li>
            <h3>The entry, as the registry serves it</h3>
            <${Facts} items=${[
              ['Leaf index', String(entry.leaf_index)],
              ['Event seq', String(entry.seq)],
              ['Type', typeof content?.type === 'string' ? html`<code>${content.type}</code>` : html`<span class="muted">unreadable</span>`],
              ['Subject', html`<${Subject} content=${content} names=${names} />`],
              ['Time', typeof content?.occurred_at === 'string' ? html`<${Time} at=${content.occurred_at} />` : '—'],
            ]} />
            <p class="small">Its text (canonical JSON; these exact UTF-8 bytes are what the tree commits to):</p>
            <pre id="leaf-text" tabindex="0" role="region" aria-label="The entry's text">${entry.leaf}</pre>
          </li>
          <li>
            <h3>Its leaf hash, computed here</h3>
            <p>SHA-256(<code>0x00</code> ‖ the text's UTF-8 bytes) = <${Hash} hex=${leafHex} full /></p>
            <p class="small">${served === leafHex
              ? 'The registry lists the same hash for this entry (shown for comparison only: the console never trusts a hash it is told).'
              : html`The registry lists a different hash for this entry, <${Hash} hex=${served} />: the text it serves does not hash to what it recorded.`}</p>
          </li>
          ${proofView}
        </ol>
      <//>
    `,
  );
}
