/**
 * A PNG of one console page at the fixed viewport, signed in to the console (and only the console)
 * with the caller's own credential. A page that redirects off the allowed origins is refused, not
 * pictured; a console that will not open, or will not take the credential, is 503.
 */
import type { ConsolePage } from '../contract/console-pages.ts';
import { WardError } from '../core/errors.ts';
import { SignInRefused, type ConsoleBrowser, type ConsoleSession } from './console-browser.ts';
import { BLOCKED_HEADER } from './origin-guard-proxy.ts';

export type ScreenshotRequest = {
  /** Where the browser signs in. */
  consoleOrigin: string;
  allowedOrigins: string[];
  /** The (checked, allowed) origin the page is opened at. */
  origin: string;
  page: ConsolePage;
  credential?: string | undefined;
};

export async function screenshotConsolePage(browser: ConsoleBrowser, request: ScreenshotRequest): Promise<Buffer> {
  const { consoleOrigin, origin } = request;
  let session: ConsoleSession;
  try {
    session = await browser.open({ consoleOrigin, allowedOrigins: request.allowedOrigins, credential: request.credential });
  } catch (error) {
    if (error instanceof SignInRefused) throw credentialRefused(consoleOrigin);
    throw unreachable(consoleOrigin, error);
  }
  try {
    const response = await session.page.goto(new URL(`/${request.page}`, origin).href, { waitUntil: 'load' }).catch((error: unknown) => {
      throw unreachable(origin, error);
    });
    const refusedHop = response?.headers()[BLOCKED_HEADER];
    if (refusedHop !== undefined) {
      const hop = session.blocked.findLast((blocked) => blocked.kind === refusedHop);
      throw new WardError('URL_NOT_ALLOWED', `The page at ${origin} led off the origins computer use may open; nothing was pictured.`, {
        pointer: '/base_url',
        origin: hop?.origin ?? null,
        allowed: request.allowedOrigins,
      });
    }
    const shown = new URL(session.page.url());
    if (!response || (shown.origin === consoleOrigin && shown.pathname === '/sign-in')) throw credentialRefused(consoleOrigin);
    return await session.page.screenshot({ type: 'png' });
  } finally {
    await session.close();
  }
}

function credentialRefused(origin: string): WardError {
  return new WardError('DEPENDENCY_UNAVAILABLE', 'The console asked for sign-in and did not accept the credential of this request.', { url: origin });
}

function unreachable(origin: string, error: unknown): WardError {
  const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
  return new WardError('DEPENDENCY_UNAVAILABLE', `The console at ${origin} could not be opened (${reason}).`, { url: origin });
}
