/**
 * Computer use (contract §12, docs/computer-use.md): what the registry needs to open the console in a
 * browser on an administrator's behalf. This part serves the screenshot endpoint: one console page as
 * a PNG, taken in a fresh, signed-in browser context confined to the allowed origins.
 */
import type { Config } from '../../core/config.ts';
import { WardError } from '../../core/errors.ts';
import { createConsoleBrowser } from './console-browser.ts';

/** The nine console pages (contract §12). */
export const CONSOLE_PAGES = ['dashboard', 'agents', 'trust', 'federation', 'routing', 'audit', 'alerts', 'diagnostics', 'settings'] as const;
export type ConsolePage = (typeof CONSOLE_PAGES)[number];

export type ComputerUseService = ReturnType<typeof createComputerUseService>;

export function createComputerUseService(config: Config) {
  const browser = createConsoleBrowser({ chromiumPath: config.CHROMIUM_PATH });
  /** Set by `ward start` once the console listens (its port may have been 0). */
  let consoleOrigin = new URL(config.CONSOLE_URL ?? `http://127.0.0.1:${config.CONSOLE_PORT}`).origin;

  function allowedOrigins(): string[] {
    const listed = (config.COMPUTER_USE_ALLOWED_ORIGINS ?? '')
      .split(',')
      .map((origin) => origin.trim())
      .filter(Boolean)
      .map((origin) => new URL(origin).origin);
    return listed.length > 0 ? listed : [consoleOrigin];
  }

  /** What is missing for `needs` here: 503 DEPENDENCY_UNAVAILABLE names it with an install hint. */
  function requireDependencies(needs: ReadonlyArray<'browser' | 'model'>): void {
    const missing = needs.filter((need) => (need === 'browser' ? !browser.installed() : !config.COMPUTER_USE_API_KEY));
    if (missing.length === 0) return;
    const hints = missing.map((need) =>
      need === 'browser'
        ? `no browser at CHROMIUM_PATH (${config.CHROMIUM_PATH}): apt-get install chromium, or set CHROMIUM_PATH`
        : 'no model: set COMPUTER_USE_API_KEY (and COMPUTER_USE_MODEL_URL for another endpoint)',
    );
    throw new WardError('DEPENDENCY_UNAVAILABLE', `Computer use is not available here: ${hints.join('; ')}.`, { missing, hint: hints.join('; ') });
  }

  /** `base` as an origin, refused (422 URL_NOT_ALLOWED) unless computer use may open it. */
  function checkOrigin(base: string, pointer: string): string {
    const origin = new URL(base).origin;
    const allowed = allowedOrigins();
    if (!allowed.includes(origin)) {
      throw new WardError('URL_NOT_ALLOWED', `${origin} is not an origin computer use may open.`, { pointer, origin, allowed });
    }
    return origin;
  }

  return {
    consoleOrigin: () => consoleOrigin,
    setConsoleOrigin(url: string) {
      consoleOrigin = new URL(url).origin;
    },
    allowedOrigins,
    requireDependencies,
    checkOrigin,

    /** A PNG of one console page at the fixed viewport, signed in with the caller's own credential. */
    async screenshot(input: { page: ConsolePage; baseUrl?: string | undefined; credential?: string | undefined }): Promise<Buffer> {
      const origin = checkOrigin(input.baseUrl ?? consoleOrigin, '/base_url');
      requireDependencies(['browser']);
      let session: Awaited<ReturnType<typeof browser.open>>;
      try {
        session = await browser.open({ origin, allowedOrigins: allowedOrigins(), credential: input.credential });
      } catch (error) {
        throw unreachable(origin, error);
      }
      try {
        const response = await session.page.goto(new URL(`/${input.page}`, origin).href, { waitUntil: 'load' }).catch((error: unknown) => {
          throw unreachable(origin, error);
        });
        if (!response || new URL(session.page.url()).pathname === '/sign-in') {
          throw new WardError('DEPENDENCY_UNAVAILABLE', 'The console asked for sign-in and did not accept the credential of this request.', { url: origin });
        }
        return await session.page.screenshot({ type: 'png' });
      } finally {
        await session.close();
      }
    },

    close: () => browser.close(),
  };
}

function unreachable(origin: string, error: unknown): WardError {
  const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
  return new WardError('DEPENDENCY_UNAVAILABLE', `The console at ${origin} could not be opened (${reason}).`, { url: origin });
}
