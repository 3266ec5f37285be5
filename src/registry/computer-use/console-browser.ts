/**
 * The browser computer use drives (docs/computer-use.md): Debian's Chromium through playwright-core,
 * launched once and lazily, never downloaded. Each use gets its own browser context (no cookies or
 * storage shared between runs) with a fixed viewport, and every request the page makes to an origin
 * outside the allowed list is aborted in the browser: a model steered towards the cloud metadata
 * address or a loopback service reaches nothing.
 */
import { existsSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { CONSOLE_PERSONA_HEADER } from './personas.ts';

export const VIEWPORT = { width: 1280, height: 800 } as const;

export type ConsoleSession = {
  readonly page: Page;
  /** Requests the page tried to make outside the allowed origins, in order (URLs). */
  readonly blocked: readonly string[];
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
          // Root in a container has no user namespace for Chromium's sandbox; the page is confined by
          // the origin filter below, not by the sandbox.
          args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
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
     * A fresh context on `origin`, signed in to the console with `credential` when the console asks
     * for it (a console open without sign-in is left as it is). With `persona`, every request the
     * context sends carries it in `CONSOLE_PERSONA_HEADER`, whatever a page asked for.
     */
    async open(session: {
      origin: string;
      allowedOrigins: readonly string[];
      credential?: string | undefined;
      persona?: string | undefined;
      headless?: boolean | undefined;
    }): Promise<ConsoleSession> {
      const context: BrowserContext = await (await browser(session.headless ?? true)).newContext({ viewport: VIEWPORT, timezoneId: 'UTC', serviceWorkers: 'block' });
      const blocked: string[] = [];
      await context.route('**/*', async (route) => {
        const request = route.request();
        const url = request.url();
        if (!isAllowed(url, session.allowedOrigins)) {
          blocked.push(url);
          return route.abort('blockedbyclient');
        }
        if (session.persona === undefined) return route.continue();
        return route.continue({ headers: { ...(await request.allHeaders()), [CONSOLE_PERSONA_HEADER]: session.persona } });
      });
      try {
        const page = await context.newPage();
        if (session.credential) await signIn(page, session.origin, session.credential);
        return { page, blocked, close: () => context.close() };
      } catch (error) {
        await context.close();
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

/** Signs in at the console's form; a console that opens without sign-in redirects away from it. */
async function signIn(page: Page, origin: string, credential: string): Promise<void> {
  await page.goto(new URL('/sign-in', origin).href);
  if (new URL(page.url()).pathname !== '/sign-in') return;
  await page.locator('#credential').fill(credential);
  // The console answers 303 to the next page when it admits the credential, and the form again (401,
  // 403) when it does not: the answer to the post says which at once.
  const [answer] = await Promise.all([
    page.waitForResponse((response) => response.request().method() === 'POST' && new URL(response.url()).pathname === '/sign-in'),
    page.locator('form[action="/sign-in"] button[type="submit"]').click(),
  ]);
  if (answer.status() !== 303) throw new SignInRefused(`the console refused the credential at sign-in (${answer.status()})`);
  await page.waitForURL((url) => url.pathname !== '/sign-in');
}
