/**
 * `node scripts/try-screenshots.ts [dir]`: the try page of a whole `ward start` service, walked as a
 * person would (triage.assess picked, a test message with vital signs sent to the shipped triage
 * agent and followed to its end, a PHI message refused, an MCP tool called), at 1280×800 and 390×844,
 * as PNG files for people to look at (default dir: screenshots/console).
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type Page } from 'playwright-core';
import { loadConfig } from '../src/core/config.ts';
import { loadMeshConfig } from '../src/mesh/mesh-config.ts';
import { CHROMIUM_ARGS } from '../src/computer-use/console-browser.ts';
import { startService } from '../src/service/start-service.ts';

const out = resolve(process.argv.slice(2).find((arg) => !arg.startsWith('--')) ?? 'screenshots/console');
mkdirSync(out, { recursive: true });
const data = mkdtempSync(join(tmpdir(), 'ward-try-screens-'));
const env = { REGISTRY_DATA_DIR: data, MESH_DATA_DIR: join(data, 'mesh'), REGISTRY_PORT: '0', GATEWAY_PORT: '0', CONSOLE_PORT: '0', REGISTRY_LOG_LEVEL: 'warn', REGISTRY_HEALTH_PROBES: 'false' };
const service = await startService(loadConfig(env), loadMeshConfig(env), env);
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', headless: true, args: [...CHROMIUM_ARGS] });
try {
  const url = (path: string) => new URL(path, service.console.url).href;
  for (const [width, height, suffix] of [[1280, 800, ''], [390, 844, '-narrow']] as const) {
    const page = await browser.newPage({ viewport: { width, height }, timezoneId: 'Europe/London' });
    const shot = async (name: string, target?: string) => {
      if (target) await page.locator(target).scrollIntoViewIfNeeded();
      const file = join(out, `try-${name}${suffix}.png`);
      await page.screenshot({ path: file });
      console.log(file);
    };
    await page.goto(url('/try'));
    await shot('empty');
    await page.locator('#try-capability').fill('triage.assess');
    await page.locator('#try-capability').press('Enter');
    await page.locator('#try-agents li a').first().click();
    await page.locator('#try-endpoint').waitFor();
    await shot('advice', '#try-advice');
    await page.locator('#try-message').fill('chest pain');
    await page.locator('#try-data').fill(JSON.stringify({ vital_signs: { heart_rate: 118, respiratory_rate: 22, oxygen_saturation: 94, systolic_bp: 105, consciousness: 'alert', temperature_c: 37.2 } }));
    await page.locator('#try-send-form button[type="submit"]').click();
    await page.locator('#try-task-states li[data-state]').last().waitFor({ timeout: 30_000 });
    await page.locator('#try-task-status[data-state="completed"]').waitFor({ timeout: 30_000 }).catch(() => undefined);
    await shot('task', '#try-task');
    await page.locator('#try-message').fill('Jane Doe, NHS number 943 476 5919, chest pain');
    await page.locator('#try-send-form button[type="submit"]').click();
    await page.locator('#try-refusal').waitFor();
    await shot('phi', '#try-refusal');
    await page.locator('#tool-capability').fill('triage.assess');
    await page.locator('#try-tool-form button[type="submit"]').click();
    await page.locator('#try-tool-result').waitFor();
    await shot('tool', '#try-tool-result');
    await (page as Page).close();
  }
} finally {
  await browser.close();
  await service.close();
  rmSync(data, { recursive: true, force: true });
}
