/**
 * The frame of every console page: a skip link, the banner with who is signed in, the navigation
 * between the pages, and one `<main>` with the page's heading. Landmarks and labels are stable,
 * so a person with a screen reader and a computer-use model find the same things in the same places.
 * The development and persona notices are named sections (region landmarks): nothing sits outside one.
 */
import { EVENT_TYPES } from '../../contract/event-types.ts';
import { html, type View } from './html.ts';
import { LiveRefreshers } from './live-sections.ts';

export const PAGES = [
  ['dashboard', 'Dashboard'],
  ['agents', 'Agents'],
  ['mesh', 'Mesh'],
  ['trust', 'Trust'],
  ['federation', 'Federation'],
  ['routing', 'Routing'],
  ['try', 'Try'],
  ['audit', 'Audit'],
  ['alerts', 'Alerts'],
  ['diagnostics', 'Diagnostics'],
  ['computer-use', 'Computer use'],
  ['settings', 'Settings'],
] as const;

export type PageName = (typeof PAGES)[number][0];

/** Who is looking, as the page shows it. */
export type Viewer = {
  label: string;
  scopes: readonly string[];
  openAccess: boolean;
  /** The registry's id of the signed-in credential (`GET /v1/caller`), when signed in. */
  credentialId?: string;
  /** A computer-use persona this browser acts as, when it is one; read-only ones cannot change anything. */
  persona?: { name: string; mayAct: boolean };
};

export type Frame = {
  /** Which of the pages this is (highlighted in the navigation), if any. */
  page?: PageName | undefined;
  title: string;
  viewer?: Viewer | undefined;
  csrfToken?: string | undefined;
  /** Whether the page follows the registry's event stream (web/console.js opens /live). */
  live?: boolean;
  /** A page that follows something else (the mesh page polls the gateway, the try page streams a task): the live badge's words. */
  liveLabel?: string;
};

export function Layout({ frame, children }: { frame: Frame; children: View }): View {
  const { viewer } = frame;
  return html`<html lang="en">
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <meta name="htmx-config" content='{"includeIndicatorStyles":false,"allowEval":false,"allowScriptTags":false,"selfRequestsOnly":true,"historyCacheSize":0}' />
      <title>${frame.title} · Ward console</title>
      <link rel="icon" href="/static/favicon.svg" type="image/svg+xml" />
      <link rel="stylesheet" href="/static/console.css" />
      <script src="/static/htmx.min.js" defer></script>
      <script src="/static/console.js" defer></script>
    </head>
    <body data-live=${frame.live && viewer ? 'on' : 'off'} data-event-types=${EVENT_TYPES.join(' ')}>
      <a class="skip" href="#main">Skip to content</a>
      ${viewer?.openAccess &&
      html`<section class="banner" aria-label="Access">
        <strong>Development mode:</strong>${' this console is open without sign-in because the registry runs with '}<code>REGISTRY_AUTH_MODE=disabled</code>${' on a loopback address. Anyone on this machine can act as an administrator.'}
      </section>`}
      ${viewer?.persona &&
      html`<section class="banner" aria-label="Persona">
        <strong>Computer use, persona ${viewer.persona.name}:</strong>${viewer.persona.mayAct ? ' this session may act on the registry.' : ' this session is read-only; the console refuses every change.'}
      </section>`}
      <header class="top">
        <a class="brand" href="/dashboard">Ward <span>console</span></a>
        ${viewer &&
        html`<div class="who">
          <span class="live-state" id="live-state" role="status" aria-live="polite" data-state=${!frame.live && frame.liveLabel ? 'live' : 'idle'}>${frame.live ? 'Connecting…' : (frame.liveLabel ?? '')}</span>
          <span class="viewer" title=${viewer.scopes.join(' ')}>${viewer.label}</span>
          ${!viewer.openAccess &&
          html`<form method="post" action="/sign-out" class="inline">
            <input type="hidden" name="_csrf" value=${frame.csrfToken ?? ''} />
            <button type="submit" class="link">Sign out</button>
          </form>`}
        </div>`}
      </header>
      ${viewer &&
      html`<nav class="pages" aria-label="Console pages">
        <ul>
          ${PAGES.map(([name, label]) => html`<li><a href=${`/${name}`} aria-current=${frame.page === name ? 'page' : undefined}>${label}</a></li>`)}
        </ul>
      </nav>`}
      <main id="main" tabindex="-1">
        <h1>${frame.title}</h1>
        ${children}
      </main>
      <${LiveRefreshers} />
    </body>
  </html>`;
}
