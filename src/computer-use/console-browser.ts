/**
 * The browser computer use drives (docs/computer-use.md): Debian's Chromium through playwright-core,
 * launched once and lazily, never downloaded. Each use gets its own browser context (no cookies or
 * storage shared between runs) with a fixed viewport, and all of its traffic goes through a proxy of
 * its own that refuses every hop to an origin outside the allowed list (origin-guard-proxy.ts): a
 * model steered towards the cloud metadata address or a loopback service, by a link, a script or a
 * redirect, reaches nothing.
 */
import { existsSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { originOf, startOriginGuardProxy, type BlockedRequest } from './origin-guard-proxy.ts';
import { CONSOLE_PERSONA_HEADER } from '../contract/personas.ts';

export const VIEWPORT = { width: 1280, height: 800 } as const;

/**
 * How Ward starts Debian's Chromium, in the registry and in the tests that drive pages: root in a
 * container has no user namespace for Chromium's sandbox (a page is confined by the origin guard, not
 * by the sandbox), and none of Chromium's own calls home are made: a closed network refuses them, and
 * through the origin guard they would be refused and recorded as a run's.
 */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-features=AutofillServerCommunication,OptimizationHints,Translate,MediaRouter,CertificateTransparencyComponentUpdater',
  '--disable-client-side-phishing-detection',
  '--disable-domain-reliability',
  '--no-pings',
] as const;

export type ConsoleSession = {
  readonly page: Page;
  /** Requests refused on the way out, in order: to an origin off the list, a redirect there, a tunnel. */
  readonly blocked: readonly BlockedRequest[];
  close(): Promise<void>;
};

export type ConsoleBrowser = ReturnType<typeof createConsoleBrowser>;

export function createConsoleBrowser(options: { chromiumPath: string }) {
  /** One browser per mode: headless (the default) and, where a display exists, headed. */
  const launching = new Map<boolean, Promise<Browser>>();

  function browser(headless: boolean): Promise<Browser> {
    const running = launching.get(headless);
    if (running) return running;
    // playwright-core is loaded on the first run, not when the registry starts: a large module every
    // registry would otherwise load, whether it uses computer use or not.
    const launch = import('playwright-core')
      .then(({ chromium }) =>
        chromium.launch({
          executablePath: options.chromiumPath,
          headless,
          args: [...CHROMIUM_ARGS],
        }),
      )
      .catch((error: unknown) => {
        launching.delete(headless);
        throw error;
      });
    launching.set(headless, launch);
    return launch;
  }

  return {
    /** Whether the browser can be had here (the executable exists). */
    installed: () => existsSync(options.chromiumPath),

    /**
     * A fresh context whose every request goes through its own origin-guard proxy
     * (origin-guard-proxy.ts), signed in to the console with `credential` when the console asks for
     * it (a console open without sign-in is left as it is). The credential is posted to the console's
     * sign-in from here, never typed into a page: no page, script or model sees it, and no other
     * origin receives it or the session cookie it buys. With `persona`, every request to the console
     * carries it in `CONSOLE_PERSONA_HEADER`, whatever a page asked for.
     */
    async open(session: {
      consoleOrigin: string;
      allowedOrigins: readonly string[];
      /** The credential, or what mints it: asked for only when the console shows its sign-in form. */
      credential?: string | (() => Promise<string>) | undefined;
      persona?: string | undefined;
      headless?: boolean | undefined;
    }): Promise<ConsoleSession> {
      const blocked: BlockedRequest[] = [];
      const proxy = await startOriginGuardProxy({
        allowedOrigins: session.allowedOrigins,
        consoleOrigin: session.consoleOrigin,
        persona: session.persona,
        personaHeader: CONSOLE_PERSONA_HEADER,
        onBlocked: (request) => blocked.push(request),
      });
      let context: BrowserContext;
      try {
        context = await (
          await browser(session.headless ?? true)
        ).newContext({
          viewport: VIEWPORT,
          timezoneId: 'UTC',
          serviceWorkers: 'block',
          acceptDownloads: false,
          proxy: { server: proxy.server },
        });
      } catch (error) {
        await proxy.close();
        throw error;
      }
      const close = async () => {
        await context.close().catch(() => undefined);
        await proxy.close();
      };
      try {
        // The first hop of each request, refused before it leaves the browser; every later hop (a
        // redirect's) is the proxy's to check.
        await context.route('**/*', async (route) => {
          const request = route.request();
          const url = request.url();
          if (!isAllowed(url, session.allowedOrigins)) {
            blocked.push({ url, origin: originOf(url) ?? url, kind: 'request' });
            return route.abort('blockedbyclient');
          }
          if (session.persona === undefined || originOf(url) !== session.consoleOrigin)
            return route.continue();
          return route.continue({
            headers: { ...(await request.allHeaders()), [CONSOLE_PERSONA_HEADER]: session.persona },
          });
        });
        if (session.credential) {
          await signIn(context, session.consoleOrigin, session.credential, session.persona);
          for (const cookie of await context.cookies(session.consoleOrigin))
            proxy.consoleCookies.add(cookie.name);
        }
        const page = await context.newPage();
        return { page, blocked, close };
      } catch (error) {
        await close();
        throw error;
      }
    },

    async close(): Promise<void> {
      const running = [...launching.values()];
      launching.clear();
      await Promise.all(running.map(async (launch) => (await launch.catch(() => undefined))?.close()));
    },
  };
}

/** Whether `url` is on one of the allowed origins (`data:` and `about:` documents carry no request off the machine). */
export function isAllowed(url: string, allowedOrigins: readonly string[]): boolean {
  if (url.startsWith('data:') || url === 'about:blank') return true;
  try {
    return allowedOrigins.includes(new URL(url).origin);
  } catch {
    return false;
  }
}

/** The console answered the sign-in form without admitting the credential (unknown, revoked, not an admin's). */
export class SignInRefused extends Error {}

/**
 * Signs in at the console's own sign-in form, from here rather than from a page: the form is read for
 * its CSRF token and posted with the credential, and the session cookie the console answers with lands
 * in the context's jar (HttpOnly: no page script reads it). A console that opens without sign-in
 * redirects away from its form, and is left as it is.
 */
async function signIn(
  context: BrowserContext,
  consoleOrigin: string,
  credential: string | (() => Promise<string>),
  persona: string | undefined,
): Promise<void> {
  const url = new URL('/sign-in', consoleOrigin).href;
  const headers: Record<string, string> = persona === undefined ? {} : { [CONSOLE_PERSONA_HEADER]: persona };
  const form = await context.request.get(url, { maxRedirects: 0, headers });
  if (form.status() >= 300 && form.status() < 400) return;
  const csrf = /<input[^>]*name="_csrf"[^>]*value="([^"]*)"/.exec(await form.text())?.[1];
  if (form.status() !== 200 || csrf === undefined)
    throw new SignInRefused(`the console's sign-in form could not be read (${form.status()})`);
  // The console answers 303 to the next page when it admits the credential, and the form again (401,
  // 403) when it does not.
  const secret = typeof credential === 'string' ? credential : await credential();
  const answer = await context.request.post(url, {
    form: { _csrf: csrf, credential: secret, next: '/dashboard' },
    maxRedirects: 0,
    headers: { ...headers, origin: consoleOrigin },
  });
  if (answer.status() !== 303)
    throw new SignInRefused(`the console refused the credential at sign-in (${answer.status()})`);
}
