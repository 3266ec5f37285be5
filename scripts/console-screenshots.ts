/**
 * `npm run console:screenshots [-- <dir>]`: the ten console pages at 1280×800 (and at 390×844 with
 * `--narrow`), as PNG files for people to look at (default dir: screenshots/console). It starts the
 * whole service on a fresh SQLite directory and loopback ports, seeds a few agents in different
 * states and an API key, and drives Debian's Chromium (CHROMIUM_PATH, default /usr/bin/chromium).
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium } from 'playwright-core';
import { createRegistryClient } from '../src/client/registry-client.ts';
import { PAGES } from '../src/console/views/layout.ts';
import { loadConfig } from '../src/core/config.ts';
import { loadMeshConfig } from '../src/mesh/mesh-config.ts';
import { CHROMIUM_ARGS } from '../src/computer-use/console-browser.ts';
import { startService } from '../src/service/start-service.ts';

const args = process.argv.slice(2);
const narrow = args.includes('--narrow');
const out = resolve(args.find((arg) => !arg.startsWith('--')) ?? 'screenshots/console');
mkdirSync(out, { recursive: true });

const data = mkdtempSync(join(tmpdir(), 'ward-screens-'));
const env = { REGISTRY_DATA_DIR: data, REGISTRY_PORT: '0', GATEWAY_PORT: '0', CONSOLE_PORT: '0', REGISTRY_LOG_LEVEL: 'warn', REGISTRY_HEALTH_PROBES: 'false' };
const service = await startService(loadConfig(env), loadMeshConfig(env), env);
try {
  const api = createRegistryClient({ baseUrl: service.registry.ward.baseUrl() });
  const names = ['Sepsis early warning', 'Discharge summary writer', 'Radiology report triage', 'Medicines reconciliation', 'Wound photo assessment', 'Referral router'];
  for (const [index, name] of names.entries()) {
    const registered = await api.registerAgent(
      {
        display_name: name,
        jurisdiction: 'GB',
        endpoints: [{ url: `https://agents.example.org/${index}`, protocol: 'mesh-a2a-jsonrpc', priority: 10, region: 'uk-south' }],
        capabilities: { protocols: ['mesh-a2a-jsonrpc'], skills: [index % 2 ? 'triage.assess' : 'documents.summarise'] },
        trust: { certificates: [], signatures: [], attestations: [] },
        owner: { org_id: 'org-example-trust', org_name: 'Example NHS Trust', operator: 'ops@trust.example.org' },
        description: 'Seeded for the console screenshots.',
      },
      { idempotencyKey: randomUUID() },
    );
    if (!registered.ok) throw new Error(registered.text);
    if (index === 1) await api.changeAgentStatus(registered.body.agent_id, 'suspend', 'security review', { idempotencyKey: randomUUID() });
    if (index === 4) await api.changeAgentStatus(registered.body.agent_id, 'retire', undefined, { idempotencyKey: randomUUID() });
  }
  await api.createApiKey({ org_id: 'org-example-trust', display_name: 'Trust integration', tier: 'business', scopes: ['registry:read', 'registry:write'] });

  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', headless: true, args: [...CHROMIUM_ARGS] });
  const page = await browser.newPage({ viewport: narrow ? { width: 390, height: 844 } : { width: 1280, height: 800 }, timezoneId: 'Europe/London' });
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  for (const [name] of PAGES) {
    await page.goto(new URL(`/${name}`, service.console.url).href);
    await page.waitForSelector('#live-state[data-state="live"]', { timeout: 5000 }).catch(() => undefined);
    const file = join(out, `${name}${narrow ? '-narrow' : ''}.png`);
    await page.screenshot({ path: file });
    console.log(file);
  }
  await browser.close();
  if (errors.length > 0) {
    console.error(`page errors:\n${errors.join('\n')}`);
    process.exitCode = 1;
  }
} finally {
  await service.close();
  rmSync(data, { recursive: true, force: true });
}
