/**
 * `/computer-use`: the computer-use runs (docs/computer-use.md), newest first, and one run with its
 * turns: status, task, persona, the model that drove it — a run of Ward's demonstration model is
 * labelled as one, in the list and on the run — its final answer or why it failed, each turn's
 * actions and what the model said, and its ledger entries. Reads only, through the registry's API
 * with the viewer's credential; runs are started through the API (or a tool that calls it).
 */
import type { FastifyInstance } from 'fastify';
import type { Static } from 'typebox';
import type { RunSchema, RunSummarySchema } from '../../contract/schemas/computer-use-schemas.ts';
import { RUN_STATUSES } from '../../contract/run-statuses.ts';
import { html, type View } from '../views/html.ts';
import { Badge, Empty, Facts, Pager, Problem, Section, Time } from '../views/parts.ts';
import { sendPage } from '../views/send-page.ts';
import { credentialRefused, failureStatus, pageStatus, selfUrl, signInAgain, text } from './page-kit.ts';

type RunSummary = Static<typeof RunSummarySchema>;
type Run = Static<typeof RunSchema>;

const RUNS_PER_PAGE = 25;
const STATE: Record<string, string> = { completed: 'ok', failed: 'failed', canceled: 'retired', max_turns_reached: 'warning', running: 'pending', queued: 'pending' };

/** The model that drove a run; a demonstration is said in words, not by colour alone. */
export function ModelLabel({ model }: { model: RunSummary['model'] }): View {
  if (!model) return html`<span class="muted">not recorded</span>`;
  if (!model.demonstration) return html`<code>${model.name}</code>`;
  return html`<span class="badge badge-demo" data-demonstration="">Demonstration model</span> <code class="nowrap">${model.name}</code>`;
}

export function registerComputerUsePages(app: FastifyInstance): void {
  app.get<{ Querystring: { cursor?: string; status?: string } }>('/computer-use', async (request, reply) => {
    const cursor = text(request.query.cursor);
    const status = RUN_STATUSES.find((candidate) => candidate === text(request.query.status));
    const runs = await request.registry.listComputerUseRuns({ limit: RUNS_PER_PAGE, ...(cursor ? { cursor } : {}), ...(status ? { status } : {}) });
    if (credentialRefused(request, runs)) return signInAgain(request, reply);
    const href = (next: string | undefined) => `/computer-use${next || status ? `?${new URLSearchParams({ ...(status ? { status } : {}), ...(next ? { cursor: next } : {}) })}` : ''}`;
    return sendPage(
      request,
      reply,
      { page: 'computer-use', title: 'Computer use', live: true, status: pageStatus(runs) },
      html`<${Section} id="runs" title="Runs" live=${selfUrl(request)}>
        <p class="small muted">A run has a browser open this console on an administrator's behalf, driven turn by turn by a model (docs/computer-use.md). Start one with <code>POST /v1/admin/computer-use/runs</code>. To watch one without a paid model, start the demonstration model with <code>npx ward computer-use demo-model</code>; its runs are labelled “Demonstration model”.</p>
        ${runs.ok
          ? html`${RunTable({ runs: runs.body.runs, first: !cursor })}<${Pager} next=${runs.body.next_cursor} first=${!cursor} href=${href} label="Run list" />`
          : html`<${Problem} envelope=${runs.envelope} status=${runs.status} />`}
      <//>`,
    );
  });

  // A turn's screenshot, passed through from the registry with the viewer's credential (img-src 'self').
  app.get<{ Params: { sessionId: string; turn: string } }>('/computer-use/runs/:sessionId/screenshots/:turn', async (request, reply) => {
    const turn = Number(request.params.turn);
    if (!Number.isInteger(turn) || turn < 0 || turn > 50) return reply.code(404).type('text/plain').send('No such turn.');
    const shot = await request.registry.computerUseScreenshot(request.params.sessionId, turn);
    if (!shot.png) return reply.code(shot.status === null ? 503 : shot.status === 404 ? 404 : 502).type('text/plain').send('The registry did not send this screenshot.');
    return reply.type('image/png').header('cache-control', 'no-store').send(shot.png);
  });

  // The address a person guesses from the list's (`/computer-use/<id>`) leads to the run's page.
  app.get<{ Params: { sessionId: string } }>('/computer-use/:sessionId', async (request, reply) => {
    const { sessionId } = request.params;
    if (!/^[0-9A-HJKMNP-TV-Z]{26}$/.test(sessionId)) return reply.callNotFound();
    return reply.redirect(`/computer-use/runs/${sessionId}`, 301);
  });

  app.get<{ Params: { sessionId: string } }>('/computer-use/runs/:sessionId', async (request, reply) => {
    const answer = await request.registry.getComputerUseRun(request.params.sessionId);
    if (credentialRefused(request, answer)) return signInAgain(request, reply);
    if (!answer.ok) {
      return sendPage(request, reply, { page: 'computer-use', title: 'Computer-use run', status: failureStatus(answer) }, html`
        <${Problem} envelope=${answer.envelope} status=${answer.status} />
        <p><a href="/computer-use">Back to the runs</a></p>`);
    }
    const run = answer.body;
    return sendPage(request, reply, { page: 'computer-use', title: `Run ${run.session_id}`, live: true }, RunDetail({ run, self: selfUrl(request) }));
  });
}

function RunTable({ runs, first }: { runs: readonly RunSummary[]; first: boolean }): View {
  if (runs.length === 0) return html`<${Empty}>${first ? 'No run yet: runs started through the API appear here, newest first.' : 'No more runs.'}<//>`;
  return html`<table id="run-table" class="stack-narrow">
    <caption class="sr-only">Computer-use runs, newest first</caption>
    <thead><tr><th scope="col">Task</th><th scope="col">Status</th><th scope="col">Model</th><th scope="col">Persona</th><th scope="col" class="num">Turns</th><th scope="col">Requested</th></tr></thead>
    <tbody>${runs.map((run) => html`<tr data-session-id=${run.session_id}>
      <th scope="row" data-label="Task"><a href=${`/computer-use/runs/${encodeURIComponent(run.session_id)}`}>${run.task.length > 120 ? `${run.task.slice(0, 119)}…` : run.task}</a></th>
      <td data-label="Status"><${Badge} state=${STATE[run.status] ?? 'unknown'} label=${run.status.replace(/_/g, ' ')} /></td>
      <td data-label="Model"><${ModelLabel} model=${run.model} /></td>
      <td data-label="Persona">${run.persona}</td>
      <td data-label="Turns" class="num nowrap">${run.turns_taken} of ${run.max_turns}</td>
      <td data-label="Requested"><${Time} at=${run.created_at} /></td>
    </tr>`)}</tbody>
  </table>`;
}

const shotHref = (sessionId: string, turn: number) => `/computer-use/runs/${encodeURIComponent(sessionId)}/screenshots/${turn}`;

function RunDetail({ run, self }: { run: Run; self: string }): View {
  return html`
    <p><a href="/computer-use">← Runs</a></p>
    ${run.model?.demonstration
      ? html`<section class="notice notice-info" aria-labelledby="demo-note-title" id="demo-note">
          <h2 id="demo-note-title" class="small-heading">A demonstration run</h2>
          <p>This run was driven by Ward's demonstration model (<code>${run.model.name}</code>): a script on this machine that follows simple task patterns, not an AI. It shows how a run works; its report is not a model's judgement.</p>
        </section>`
      : null}
    <${Section} id="run" title="The run" live=${self}>
      <${Facts} items=${[
        ['Status', html`<${Badge} state=${STATE[run.status] ?? 'unknown'} label=${run.status.replace(/_/g, ' ')} />`],
        ['Model', html`<${ModelLabel} model=${run.model} />`],
        ['Task', run.task],
        ['Persona', run.persona],
        ['Opened', html`<code>${run.url}</code>`],
        ['Turns', `${run.turns_taken} of at most ${run.max_turns}`],
        ['Requested', html`<${Time} at=${run.created_at} />`],
        ['Ended', html`<${Time} at=${run.ended_at} />`],
      ]} />
      ${run.final_answer !== null ? html`<h3 class="small-heading">Final answer</h3><p id="final-answer" class="answer">${run.final_answer}</p>` : null}
      ${run.failure_reason !== null ? html`<h3 class="small-heading">Why it failed</h3><p id="failure-reason" class="answer">${run.failure_reason}</p>` : null}
    <//>
    <${Section} id="turns" title="Turns">
      ${run.turns.length === 0
        ? html`<${Empty}>No turn yet: the first is the page as the run opened it.<//>`
        : html`<table id="turn-table" class="stack-narrow">
            <caption class="sr-only">Each turn: the actions carried out and what the model said</caption>
            <thead><tr><th scope="col" class="num">Turn</th><th scope="col">Actions</th><th scope="col">The model said</th><th scope="col">Screenshot (SHA-256)</th></tr></thead>
            <tbody>${run.turns.map((turn) => html`<tr>
              <th scope="row" data-label="Turn" class="num">${turn.turn}</th>
              <td data-label="Actions">${turn.turn === 0 ? html`<span class="muted">opened the page</span>` : turn.actions.map((action, index) => html`${index > 0 ? ', ' : ''}<code>${action.type}</code>${action.error ? html` <span class="small">(${action.error})</span>` : ''}`)}</td>
              <td data-label="Said">${turn.model_text ?? html`<span class="muted">—</span>`}</td>
              <td data-label="Screenshot">${turn.screenshot_url
                ? html`<a href=${shotHref(run.session_id, turn.turn)}><img class="turn-shot" src=${shotHref(run.session_id, turn.turn)} width="256" height="160" loading="lazy" alt=${`The console after turn ${turn.turn}`} /></a>`
                : html`<span class="small muted">withheld by the PHI guard</span><br />`}<code class="small digest" title=${turn.screenshot_sha256}>${turn.screenshot_sha256.slice(0, 16)}…</code></td>
            </tr>`)}</tbody>
          </table>`}
      <p class="small muted">${run.ledger_entries.length} ledger entries record this run; each can be proved with the audit page.</p>
    <//>`;
}
