/**
 * Computer use (contract §12, docs/computer-use.md): what the registry needs to open the console in a
 * browser on an administrator's behalf: where it may go, what it needs installed, a screenshot of one
 * page, and the model-driven runs (computer-use-runs.ts).
 */
import type { ConsolePage } from '../../contract/console-pages.ts';
import type { Clock } from '../../core/clock.ts';
import type { Config } from '../../core/config.ts';
import { WardError } from '../../core/errors.ts';
import type { Storage } from '../storage/database.ts';
import type { ApiKeyService } from '../credentials/index.ts';
import { createComputerUseModel, type ComputerUseModel } from '../../computer-use/computer-use-model.ts';
import { createComputerUseRuns, type RunRequest, type RunRequester } from './computer-use-runs.ts';
import { writeOnce, type WriteRequest } from '../storage/idempotency.ts';
import { createConsoleBrowser, type ConsoleBrowser } from '../../computer-use/console-browser.ts';
import { screenshotConsolePage } from '../../computer-use/console-screenshot.ts';
import { originOf } from '../../computer-use/origin-guard-proxy.ts';

export { CONSOLE_PAGES, type ConsolePage } from '../../contract/console-pages.ts';

export type ComputerUseService = ReturnType<typeof createComputerUseService>;

export type ComputerUseDeps = {
  config: Config;
  storage: Storage;
  clock: Clock;
  /** Mints each run's own console credential (computer-use-runs.ts). */
  apiKeys: ApiKeyService;
  /** This registry instance, and whether another one still runs (instance-heartbeat.ts). */
  instanceId: string;
  isInstanceLive: (instanceId: string) => Promise<boolean>;
  log: (error: unknown, message: string) => void;
  /** The environment `headless: false` looks for a display in; default `process.env`. */
  env?: Record<string, string | undefined>;
};

export function createComputerUseService(deps: ComputerUseDeps) {
  const { config } = deps;
  const browser = createConsoleBrowser({ chromiumPath: config.CHROMIUM_PATH });
  let model: ComputerUseModel | undefined;
  /** Set by `ward start` once the console listens (its port may have been 0). */
  let consoleOrigin = new URL(config.CONSOLE_URL ?? `http://127.0.0.1:${config.CONSOLE_PORT}`).origin;

  function allowedOrigins(): string[] {
    const listed = (config.COMPUTER_USE_ALLOWED_ORIGINS ?? '')
      .split(',')
      .map((origin) => origin.trim())
      .filter(Boolean)
      .map((origin) => new URL(origin).origin);
    // The console is always one of them: it is what computer use opens, and where it signs in.
    return [...new Set([consoleOrigin, ...listed])];
  }

  const requireDependencies = (needs: ReadonlyArray<'browser' | 'model'>) => requireInstalled(config, browser, needs);
  const checkOrigin = (base: string, pointer: string, place: 'body' | 'query' = 'body') => checkAllowedOrigin(allowedOrigins(), base, pointer, place);

  const runs = createComputerUseRuns({
    storage: deps.storage,
    clock: deps.clock,
    browser,
    model: () => (model ??= createComputerUseModel(config)),
    modelName: config.COMPUTER_USE_MODEL,
    maxRuns: config.COMPUTER_USE_MAX_RUNS,
    instanceId: deps.instanceId,
    isInstanceLive: deps.isInstanceLive,
    allowedOrigins,
    consoleOrigin: () => consoleOrigin,
    apiKeys: deps.apiKeys,
    modelTimeoutSeconds: config.COMPUTER_USE_MODEL_TIMEOUT_SECONDS,
    log: deps.log,
  });

  return {
    consoleOrigin: () => consoleOrigin,
    runs,

    /**
     * A run request made whole and checked before anything is stored: its address (default the
     * console's dashboard) on an allowed origin, a display for `headless: false`, and a browser and a
     * model to run it with.
     */
    prepareRun(request: RunRequest): RunRequest & { url: string } {
      const url = request.url ?? new URL('/dashboard', consoleOrigin).href;
      checkOrigin(url, '/url');
      const env = deps.env ?? process.env;
      if (request.headless === false && !env.DISPLAY && !env.WAYLAND_DISPLAY) {
        throw new WardError('VALIDATION_ERROR', 'headless: false needs a display, and this registry has none (DISPLAY is not set). Leave headless at its default (true).', {
          errors: [{ in: 'body', pointer: '/headless', reason: 'no display on this registry (DISPLAY is not set)' }],
        });
      }
      requireDependencies(['browser', 'model']);
      return { ...request, url };
    },
    /**
     * Asks for a run: checked (`prepareRun`), stored in a write unit of its own once per idempotency
     * key, and queued after the commit. A replay answers what the first request stored and starts nothing.
     */
    async requestRun(write: WriteRequest, request: RunRequest, requester: RunRequester) {
      const prepared = this.prepareRun(request);
      const outcome = await writeOnce(deps, write, async (unit) => {
        const run = await runs.create(unit, write.ctx, prepared);
        return { status: 202, headers: { location: `/v1/admin/computer-use/runs/${run.session_id}` }, body: { session_id: run.session_id, status: run.status } };
      });
      if (!outcome.replayed) runs.begin(outcome.body.session_id, requester);
      return outcome;
    },

    /** Cancels a run once per idempotency key, stops it here at once, and answers the run as it now stands. */
    async cancelRun(write: WriteRequest, sessionId: string) {
      const outcome = await writeOnce(deps, write, async (unit) => {
        await runs.cancel(unit, write.ctx, sessionId);
        return { status: 200, headers: {}, body: { session_id: sessionId, status: 'canceled' } };
      });
      runs.stopLocally(sessionId);
      // A replay too: the run is read again, not stored.
      return { ...outcome, body: await runs.get(sessionId) };
    },

    setConsoleOrigin(url: string) {
      consoleOrigin = new URL(url).origin;
    },
    allowedOrigins,
    requireDependencies,
    checkOrigin,

    /** A PNG of one console page (console-screenshot.ts), at an allowed origin, with the caller's credential. */
    async screenshot(input: { page: ConsolePage; baseUrl?: string | undefined; credential?: string | undefined }): Promise<Buffer> {
      const origin = checkOrigin(input.baseUrl ?? consoleOrigin, '/base_url', 'query');
      requireDependencies(['browser']);
      return screenshotConsolePage(browser, { consoleOrigin, allowedOrigins: allowedOrigins(), origin, page: input.page, credential: input.credential });
    },

    /** Ends the runs of this instance (recorded as failed), then closes the browser. */
    async close(): Promise<void> {
      await runs.close();
      await browser.close();
    },
  };
}

/** What is missing for `needs` here: 503 DEPENDENCY_UNAVAILABLE names it with an install hint. */
function requireInstalled(config: Config, browser: ConsoleBrowser, needs: ReadonlyArray<'browser' | 'model'>): void {
  const missing = needs.filter((need) => (need === 'browser' ? !browser.installed() : !config.COMPUTER_USE_API_KEY));
  if (missing.length === 0) return;
  const hints = missing.map((need) =>
    need === 'browser'
      ? `no browser at CHROMIUM_PATH (${config.CHROMIUM_PATH}): apt-get install chromium, or set CHROMIUM_PATH`
      : 'no model: set COMPUTER_USE_API_KEY (and COMPUTER_USE_MODEL_URL for another endpoint)',
  );
  throw new WardError('DEPENDENCY_UNAVAILABLE', `Computer use is not available here: ${hints.join('; ')}.`, { missing, hint: hints.join('; ') });
}

/**
 * `base` as an origin, refused unless computer use may open it: 422 URL_NOT_ALLOWED off the list,
 * 422 VALIDATION_ERROR when it is no address a browser can open at all (`http://host:1.evil/`).
 */
function checkAllowedOrigin(allowed: string[], base: string, pointer: string, place: 'body' | 'query'): string {
  const origin = originOf(base);
  // A URL whose scheme has no origin (`mailto:`, `data:`) has the origin "null".
  if (origin === undefined || origin === 'null') {
    throw new WardError('VALIDATION_ERROR', 'The request failed validation.', { errors: [{ in: place, pointer, reason: 'must be an http(s) URL a browser can open' }] });
  }
  if (!allowed.includes(origin)) {
    throw new WardError('URL_NOT_ALLOWED', `${origin} is not an origin computer use may open.`, { pointer, origin, allowed });
  }
  return origin;
}
