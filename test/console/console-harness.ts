/**
 * What the console's browser tests share: a real registry listening on loopback (SQLite, or
 * PostgreSQL where TEST_DATABASE_URL is set), the real console in front of it, Debian's Chromium
 * driven by playwright-core, and axe-core for accessibility.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import type { TestContext } from 'node:test';
import { AxeBuilder } from '@axe-core/playwright';
import { chromium, type Browser, type Page } from 'playwright-core';
import { createRegistryClient, type RegistryClient } from '../../src/client/registry-client.ts';
import { loadConsoleConfig } from '../../src/console/console-config.ts';
import { startConsole, type RunningConsole } from '../../src/console/console-server.ts';
import type { Clock } from '../../src/core/clock.ts';
import { CHROMIUM_ARGS } from '../../src/computer-use/console-browser.ts';
import type { Backend } from '../../src/registry/storage/database.ts';
import { startRegistries, testScope, type ListeningRegistry, type Scope } from '../helpers/listening.ts';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const NEEDS_CHROMIUM = existsSync(CHROMIUM) ? {} : { skip: `${CHROMIUM} is absent (apt-get install chromium); .ci/run installs it` };

export type ConsoleStack = {
  scope: Scope;
  registry: ListeningRegistry;
  /** The registry's API as an anonymous caller (every scope while REGISTRY_AUTH_MODE is disabled). */
  api: RegistryClient;
  console: RunningConsole;
  url: (path: string) => string;
};

/**
 * A registry and a console in front of it. By default the console opens without sign-in
 * (development); `consoleEnv: { REGISTRY_AUTH_MODE: 'jwt' }` makes it ask for a credential while the
 * registry still checks any key presented to it.
 */
export async function startConsoleStack(
  t: Pick<TestContext, 'after'>,
  backend: Backend,
  options: { registryEnv?: Record<string, string>; consoleEnv?: Record<string, string>; scope?: Scope; clock?: Clock } = {},
): Promise<ConsoleStack> {
  const scope = options.scope ?? testScope(t);
  const [registry] = await startRegistries(scope, backend, { env: options.registryEnv ?? {} });
  if (!registry) throw new Error('no registry started');
  const running = await startConsoleFor(scope, registry.baseUrl, options.consoleEnv, options.clock ? { clock: options.clock } : {});
  return {
    scope,
    registry,
    api: createRegistryClient({ baseUrl: registry.baseUrl }),
    console: running,
    url: (path) => new URL(path, running.url).href,
  };
}

/** A console in front of a registry that is already running (a federation's root, say); stopped with `scope`. */
export async function startConsoleFor(scope: Scope, registryUrl: string, consoleEnv: Record<string, string> = {}, options: { clock?: Clock } = {}): Promise<RunningConsole> {
  const config = loadConsoleConfig({ REGISTRY_ENV: 'test', CONSOLE_PORT: '0', REGISTRY_URL: registryUrl, CONSOLE_LOG_LEVEL: 'silent', ...consoleEnv });
  const running = await startConsole(config, options);
  scope.defer(async () => {
    running.app.server.closeAllConnections();
    await running.close();
  });
  return running;
}

export async function launchBrowser(t: Pick<TestContext, 'after'>): Promise<Browser> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [...CHROMIUM_ARGS],
  });
  t.after(() => browser.close());
  return browser;
}

/** A page at 1280×800 that records console errors, uncaught exceptions and CSP violations. */
export async function openPage(browser: Browser, options: { width?: number; height?: number } = {}): Promise<{ page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport: { width: options.width ?? 1280, height: options.height ?? 800 }, timezoneId: 'Europe/London' });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('console', (message) => {
    // A page answered with an error status on purpose (a refused form, a 412) is not a page error, nor
    // a live stream refused because the session ended meanwhile (the page script retries, then the
    // next page asks to sign in).
    const expected = /^Failed to load resource: the server responded with a status of [45]\d\d|^EventSource's response has a status 401 /;
    if (message.type() === 'error' && !expected.test(message.text())) {
      errors.push(`console: ${message.text()}`);
    }
  });
  page.on('pageerror', (error) => errors.push(`page: ${error.message}`));
  return { page, errors };
}

/** axe-core's rule that all content sits in a landmark (a best practice, not WCAG): the elements outside one. */
export async function contentOutsideLandmarks(page: Page): Promise<string[]> {
  const results = await new AxeBuilder({ page }).withRules(['region']).analyze();
  return results.violations.flatMap((violation) => violation.nodes.map((node) => node.target.join(' ')));
}

/** axe-core on the page as it is now: no serious or critical violation. */
export async function assertAccessible(page: Page, label: string): Promise<void> {
  const results = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
  const bad = results.violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical');
  assert.deepEqual(
    bad.map((violation) => `${violation.id}: ${violation.help} (${violation.nodes.map((node) => node.target.join(' ')).slice(0, 3).join('; ')})`),
    [],
    `${label}: accessibility violations`,
  );
}


/** Waits until the page follows the registry's event stream (the live badge says so). */
export async function waitForLive(page: Page): Promise<void> {
  await page.waitForSelector('#live-state[data-state="live"]');
}
