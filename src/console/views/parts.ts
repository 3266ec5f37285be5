/**
 * The small pieces every console page is made of: times, numbers with units, status badges, problem
 * and empty states, pagination and live sections (charts: time-chart.ts). Pages compose these;
 * nothing here knows about a particular page.
 */
import type { AnswerEnvelope } from '../../client/registry-answer.ts';
import { html, type View } from './html.ts';
import { registerLiveSection } from './live-sections.ts';

/**
 * A timestamp. The server writes UTC; web/console.js rewrites the text in the viewer's time zone and
 * keeps UTC in the title (shown on hover).
 */
export function Time({ at }: { at: string | null | undefined }): View {
  if (!at) return html`<span class="muted">never</span>`;
  const utc = `${at.replace('T', ' ').replace(/\.\d+Z$|Z$/, '')} UTC`;
  return html`<time datetime=${at} title=${utc} data-local="">${utc}</time>`;
}

export const count = (value: number | null | undefined): string => (value === null || value === undefined ? '—' : value.toLocaleString('en-GB'));
export const ms = (value: number | null | undefined): string => (value === null || value === undefined ? '—' : `${Math.round(value).toLocaleString('en-GB')} ms`);
export const percent = (ratio: number | null | undefined): string => (ratio === null || ratio === undefined ? '—' : `${(ratio * 100).toFixed(1)} %`);

export function duration(seconds: number): string {
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min`;
  return `${Math.floor(seconds / 86_400)} d ${Math.floor((seconds % 86_400) / 3600)} h`;
}

/** A state word in a coloured badge; the colour is decoration, the word carries the meaning. */
export function Badge({ state, label }: { state: string; label?: string }): View {
  return html`<span class="badge badge-${state.replace(/[^a-z_-]/gi, '')}">${label ?? state.replace(/_/g, ' ')}</span>`;
}

/** What to tell a person about a failed registry call, by the error code the registry (or the client) gave. */
export function explain(envelope: AnswerEnvelope, status: number | null): { title: string; hint: string } {
  const { code, details, retry_after_ms: retryAfter } = envelope.error;
  switch (code) {
    case 'SERVICE_UNAVAILABLE':
      return status === null
        ? { title: 'The registry could not be reached', hint: `Check that the registry is running at ${String((details as { registry_url?: unknown }).registry_url ?? 'REGISTRY_URL')}; this page will work again once it answers.` }
        : { title: 'The registry is not ready', hint: 'It answered 503. Try again in a moment.' };
    case 'RATE_LIMITED':
    case 'QUOTA_EXCEEDED':
      return { title: 'The registry is limiting this key', hint: `Try again ${retryAfter ? `in ${Math.ceil(retryAfter / 1000)} s` : 'later'}.` };
    case 'INSUFFICIENT_SCOPE':
      return { title: 'Your credential lacks a scope this needs', hint: `Sign in with a key that holds ${String((details as { required_scope?: unknown }).required_scope ?? 'registry:admin')}.` };
    case 'PRECONDITION_FAILED':
      return { title: 'Someone changed this record since you opened it', hint: 'Nothing was changed. The page now shows the current record; check it and act again if you still mean to.' };
    case 'PHI_DETECTED':
      return { title: 'The registry refused text that looks like patient data', hint: 'Nothing was stored. Remove identifiers such as NHS numbers, MRNs or dates of birth and try again.' };
    default:
      return { title: 'The registry refused the request', hint: '' };
  }
}

/** A failed registry call, explained. `role="alert"` so screen readers announce it. */
export function Problem({ envelope, status }: { envelope: AnswerEnvelope; status: number | null }): View {
  const { title, hint } = explain(envelope, status);
  return html`<div class="problem" role="alert" data-code=${envelope.error.code}>
    <p class="problem-title"><strong>${title}</strong></p>
    <p>${envelope.error.message}</p>
    ${hint && html`<p>${hint}</p>`}
    <p class="muted small">Code <code>${envelope.error.code}</code>${status === null ? '' : `, HTTP ${status}`}</p>
  </div>`;
}

/** A notice after an action: what happened, in a polite live region. */
export function Notice({ kind, children }: { kind: 'success' | 'info'; children: View }): View {
  return html`<div class="notice notice-${kind}" role="status">${children}</div>`;
}

export function Empty({ children }: { children: View }): View {
  return html`<p class="empty">${children}</p>`;
}

/**
 * A section of a page. With `live` (the address a fresh copy of the page is at, usually the page's own)
 * it follows the registry: see live-sections.ts.
 */
export function Section({ id, title, live, children, actions }: { id: string; title: string; live?: string | undefined; children: View; actions?: View }): View {
  if (live) registerLiveSection(id, live);
  return html`<section id=${id} class="panel" aria-labelledby=${`${id}-title`} data-live-section=${live ? '' : undefined}>
    <div class="panel-head"><h2 id=${`${id}-title`}>${title}</h2>${actions}</div>
    ${children}
  </section>`;
}

/** Links to the first page and the next one; `href` builds a link from query values. */
export function Pager({ next, first, href, label }: { next: string | null; first: boolean; href: (cursor: string | undefined) => string; label: string }): View {
  if (!next && first) return null;
  return html`<nav class="pager" aria-label=${`${label} pages`}>
    ${!first && html`<a href=${href(undefined)}>First page</a>`}
    ${next ? html`<a href=${href(next)} rel="next">Next page</a>` : html`<span class="muted">Last page</span>`}
  </nav>`;
}

/** Definition list of label/value pairs. */
export function Facts({ items }: { items: ReadonlyArray<readonly [string, View]> }): View {
  return html`<dl class="facts">${items.map(([term, value]) => html`<div><dt>${term}</dt><dd>${value}</dd></div>`)}</dl>`;
}
