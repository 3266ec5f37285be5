/**
 * `GET /avatar` in a real browser: headless Debian Chromium driven by playwright-core, against a real
 * avatar agent on a loopback port (development secret, so `/dev/token` answers the page).
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { describe, test, type TestContext } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { systemClock } from '../../../../src/core/clock.ts';
import { createAvatarAgent } from '../../../../src/mesh/agents/avatar/avatar-agent.ts';
import { CHROMIUM_ARGS } from '../../../../src/computer-use/console-browser.ts';
import { listenAgent, meshConfig } from '../../helpers.ts';

const CHROMIUM = '/usr/bin/chromium';
// Ward's Chromium flags, and sound that plays without a click (the page speaks on its own).
const AVATAR_CHROMIUM_ARGS = [...CHROMIUM_ARGS, '--autoplay-policy=no-user-gesture-required'];
const NEEDS_CHROMIUM = existsSync(CHROMIUM) ? {} : { skip: `${CHROMIUM} is absent (apt-get install chromium); .ci/run installs it` };

async function launch(t: TestContext): Promise<Browser> {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: AVATAR_CHROMIUM_ARGS, headless: true });
  t.after(() => browser.close());
  return browser;
}

/** Console errors, uncaught exceptions and CSP violations the page produced. */
function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => errors.push(`page: ${error.message}`));
  return errors;
}

/**
 * Records every value the mouth's data-viseme and data-animation attributes take, from now on. Page
 * code is passed as text: this project's TypeScript has no DOM library.
 */
async function recordMouth(page: Page): Promise<void> {
  await page.evaluate(`(() => {
    const mouth = document.getElementById('mouth');
    const seen = { visemes: [], animations: [] };
    window.mouthSeen = seen;
    new MutationObserver((records) => {
      for (const record of records) {
        const value = mouth.getAttribute(record.attributeName) ?? '';
        (record.attributeName === 'data-viseme' ? seen.visemes : seen.animations).push(value);
      }
    }).observe(mouth, { attributes: true, attributeFilter: ['data-viseme', 'data-animation'] });
  })()`);
}

const mouthSeen = async (page: Page) => (await page.evaluate('window.mouthSeen')) as { visemes: string[]; animations: string[] };

const statuses = async (page: Page) => Promise.all((await page.locator('#progress li').all()).map((item) => item.getAttribute('data-status')));

describe('avatar web page', NEEDS_CHROMIUM, () => {
  test('a consultation in the browser: greeting, chat, progress, spoken replies with a moving mouth, summary', async (t) => {
    const config = meshConfig(t);
    const { url } = await listenAgent(t, createAvatarAgent({ config, clock: systemClock }), { config });
    const browser = await launch(t);
    const page = await browser.newPage();
    const errors = watchErrors(page);

    const response = await page.goto(new URL('avatar', url).href);
    assert.equal(response?.status(), 200);
    const csp = response?.headers()['content-security-policy'] ?? '';
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|https?:/);
    await page.waitForSelector('body[data-ready="true"]');
    assert.ok((await page.locator('#voice option').count()) >= 1, 'voices were loaded with the development token');
    // Before a consultation there is nothing to reply to: the reply form is not shown.
    assert.equal(await page.isVisible('#message-form'), false, 'the reply form is hidden before the consultation starts');

    await page.fill('#complaint', 'headache for two days');
    await page.fill('#age', '40');
    await page.selectOption('#gender', 'female');
    await page.selectOption('#urgency', 'low');
    await recordMouth(page);
    await page.click('#start');

    const clinician = page.locator('.msg.clinician');
    await clinician.first().waitFor();
    // "headache for two days" already says where and since when: the clinician says so and asks what is next.
    assert.match(
      await clinician.first().textContent() ?? '',
      /^Hello, I'm Dr Ada, your virtual GP\. I understand that the pain is in your head, and it began about two days ago\. What does the pain feel like/,
    );
    assert.equal(await page.textContent('#framework'), 'SOCRATES');
    assert.equal(await page.textContent('#phase'), 'character');
    assert.equal(await page.getAttribute('#progress li[data-status="current"]', 'data-key'), 'character');

    // The greeting is spoken: the mouth takes several shapes, then rests.
    await page.waitForSelector('#mouth[data-speaking="false"]', { state: 'attached', timeout: 30_000 });
    const greeting = await mouthSeen(page);
    const shapes = new Set(greeting.visemes.filter((viseme) => viseme !== 'sil'));
    assert.ok(shapes.size >= 3, `the mouth moved: ${greeting.visemes.join(' ')}`);
    assert.equal(greeting.visemes.at(-1), 'sil', 'at rest after speaking');
    assert.ok(greeting.animations.some((mode) => mode === 'audio' || mode === 'timer'), greeting.animations.join(' '));
    t.diagnostic(`mouth driven by: ${greeting.animations.join(' → ')}`);
    assert.equal(await page.getAttribute('#mouth', 'data-viseme'), 'sil');

    await page.uncheck('#speak');
    await page.fill('#message', 'It is a dull ache and it stays in one place');
    await page.click('#send');
    await clinician.nth(1).waitFor();
    assert.match(await clinician.nth(1).textContent() ?? '', /^Thank you\. So it feels dull, and it stays in one place\. Have you noticed anything else/);
    assert.equal(await page.getAttribute('#progress', 'data-completed'), '4');
    assert.equal(await page.textContent('#phase'), 'associations');
    assert.deepEqual(await statuses(page), [
      'completed', 'completed', 'completed', 'completed', 'current', 'pending', 'pending', 'pending',
    ]); // prettier-ignore

    // Markup in a message is shown as text, never parsed.
    const markup = '<img src=x onerror="document.body.dataset.pwned=1">I feel a bit <b>sick</b>';
    await page.fill('#message', markup);
    await page.click('#send');
    await clinician.nth(2).waitFor();
    assert.equal(await page.locator('.msg.patient').last().textContent(), markup);
    assert.equal(await page.locator('#chat img, #chat b').count(), 0);
    assert.equal(await page.getAttribute('body', 'data-pwned'), null);
    assert.equal(await page.textContent('#phase'), 'time_course', 'feeling sick answered the associations step');

    await page.click('#end');
    await page.waitForSelector('#summary:not([hidden])');
    const summary = await page.textContent('#summary-list');
    assert.match(summary ?? '', /SOCRATES/);
    assert.match(summary ?? '', /Site.*head/s);
    assert.match(summary ?? '', /Red flagsnone/);
    assert.deepEqual(errors, [], 'no console errors, page errors or CSP violations');
  });

  test('when audio cannot play, the mouth follows the same timeline on a timer', async (t) => {
    const config = meshConfig(t);
    const { url } = await listenAgent(t, createAvatarAgent({ config, clock: systemClock }), { config });
    const page = await (await launch(t)).newPage();
    const errors = watchErrors(page);
    // As a browser refusing autoplay would: play() rejects.
    await page.addInitScript(`HTMLMediaElement.prototype.play = function () { return Promise.reject(new DOMException('refused', 'NotAllowedError')); };`);
    await page.goto(new URL('avatar', url).href);
    await page.waitForSelector('body[data-ready="true"]');
    await page.fill('#persona-name', 'Dr Bo');
    await recordMouth(page);
    await page.click('#start');
    await page.locator('.msg.clinician').first().waitFor();
    await page.waitForSelector('#mouth[data-speaking="false"]', { state: 'attached', timeout: 30_000 });
    const seen = await mouthSeen(page);
    assert.ok(seen.animations.includes('timer'), seen.animations.join(' '));
    assert.ok(new Set(seen.visemes.filter((viseme) => viseme !== 'sil')).size >= 3, seen.visemes.join(' '));
    assert.equal(seen.visemes.at(-1), 'sil');
    assert.deepEqual(errors, []);
  });

  test('the page says why it cannot work when development tokens are off', async (t) => {
    const config = meshConfig(t, { MESH_JWT_SECRET: 'a-real-secret-that-is-not-the-default' });
    const { url } = await listenAgent(t, createAvatarAgent({ config, clock: systemClock }), { config });
    const page = await (await launch(t)).newPage();
    await page.goto(new URL('avatar', url).href);
    await page.waitForSelector('#status[data-kind="error"]');
    assert.match(await page.textContent('#status') ?? '', /Development tokens are off/);
    assert.equal(await page.isDisabled('#start'), true);
  });
});
