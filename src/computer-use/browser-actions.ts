/**
 * Carries out one action of the model's computer-use tool (`computer_20250124`) in a Playwright page.
 * The tool speaks in xdotool terms (key names such as `Return` or `ctrl+a`, screen coordinates); the
 * page is the whole "screen", so coordinates are viewport pixels. A malformed action is not an error of
 * the run: it is answered to the model as a failed tool use, which it can correct.
 */
import type { Page, Request } from 'playwright-core';
import { VIEWPORT } from './console-browser.ts';

/** An action the model asked for, as it arrives in a `tool_use` block's input. */
export type ToolInput = Record<string, unknown>;

export class ActionError extends Error {}

/** Longest pause the model may ask for (`wait`, `hold_key`), in seconds. */
const MAX_PAUSE_SECONDS = 10;
const WHEEL_PIXELS_PER_CLICK = 100;
const NAVIGATION_TIMEOUT_MS = 15_000;

const KEY_NAMES: Record<string, string> = {
  return: 'Enter',
  enter: 'Enter',
  kp_enter: 'Enter',
  tab: 'Tab',
  backspace: 'Backspace',
  delete: 'Delete',
  escape: 'Escape',
  esc: 'Escape',
  space: ' ',
  up: 'ArrowUp',
  down: 'ArrowDown',
  left: 'ArrowLeft',
  right: 'ArrowRight',
  page_up: 'PageUp',
  prior: 'PageUp',
  page_down: 'PageDown',
  next: 'PageDown',
  home: 'Home',
  end: 'End',
  insert: 'Insert',
  ctrl: 'Control',
  control: 'Control',
  alt: 'Alt',
  shift: 'Shift',
  super: 'Meta',
  cmd: 'Meta',
  meta: 'Meta',
};

/** `ctrl+shift+Tab` → `Control+Shift+Tab`; F-keys and single characters pass as they are. */
export function playwrightKey(xdotool: string): string {
  return xdotool
    .split('+')
    .map((part) => {
      const known = KEY_NAMES[part.toLowerCase()];
      if (known) return known;
      if (/^f([1-9]|1[0-2])$/i.test(part)) return part.toUpperCase();
      if (part.length === 1) return part;
      throw new ActionError(`unknown key "${part}"`);
    })
    .join('+');
}

/** The page a run drives, with where the mouse is (the tool's `cursor_position` asks). */
export type DrivenPage = { page: Page; cursor: { x: number; y: number } };

/**
 * Carries out `input` in the page. Answers text for the model when the action has something to say
 * (`cursor_position`), else undefined. Throws `ActionError` for an action the model got wrong.
 */
export async function carryOut(driven: DrivenPage, input: ToolInput, signal: AbortSignal): Promise<string | undefined> {
  const { page } = driven;
  const action = typeof input.action === 'string' ? input.action : '';
  switch (action) {
    case 'screenshot':
      return undefined;
    case 'cursor_position':
      return `X=${driven.cursor.x},Y=${driven.cursor.y}`;
    case 'mouse_move':
      await moveTo(driven, coordinate(input.coordinate, 'coordinate'));
      return undefined;
    case 'left_click':
    case 'right_click':
    case 'middle_click':
    case 'double_click':
    case 'triple_click': {
      if (input.coordinate !== undefined) await moveTo(driven, coordinate(input.coordinate, 'coordinate'));
      const button = action === 'right_click' ? 'right' : action === 'middle_click' ? 'middle' : 'left';
      const clickCount = action === 'double_click' ? 2 : action === 'triple_click' ? 3 : 1;
      await settle(page, () => withModifiers(page, input.text, () => page.mouse.click(driven.cursor.x, driven.cursor.y, { button, clickCount })));
      return undefined;
    }
    case 'left_mouse_down':
      await page.mouse.down();
      return undefined;
    case 'left_mouse_up':
      await settle(page, () => page.mouse.up());
      return undefined;
    case 'left_click_drag': {
      const from = coordinate(input.start_coordinate, 'start_coordinate');
      const to = coordinate(input.coordinate, 'coordinate');
      await moveTo(driven, from);
      await page.mouse.down();
      await moveTo(driven, to);
      await settle(page, () => page.mouse.up());
      return undefined;
    }
    case 'type': {
      const typed = text(input.text, 'text');
      await settle(page, () => page.keyboard.type(typed));
      return undefined;
    }
    case 'key': {
      const combos = text(input.text, 'text').trim().split(/\s+/).map((combo) => playwrightKey(combo));
      await settle(page, async () => {
        for (const combo of combos) await page.keyboard.press(combo);
      });
      return undefined;
    }
    case 'hold_key': {
      const keys = text(input.text, 'text').split('+').map((key) => playwrightKey(key));
      for (const key of keys) await page.keyboard.down(key);
      await pause(seconds(input.duration), signal);
      for (const key of keys.reverse()) await page.keyboard.up(key);
      return undefined;
    }
    case 'scroll': {
      if (input.coordinate !== undefined) await moveTo(driven, coordinate(input.coordinate, 'coordinate'));
      const clicks = input.scroll_amount === undefined ? 3 : integer(input.scroll_amount, 'scroll_amount', 1, 50);
      const direction = input.scroll_direction;
      const delta = { up: [0, -1], down: [0, 1], left: [-1, 0], right: [1, 0] }[String(direction)];
      if (!delta) throw new ActionError('scroll_direction must be one of up, down, left, right');
      await withModifiers(page, input.text, () => page.mouse.wheel(delta[0]! * clicks * WHEEL_PIXELS_PER_CLICK, delta[1]! * clicks * WHEEL_PIXELS_PER_CLICK));
      await page.waitForTimeout(100);
      return undefined;
    }
    case 'wait':
      await pause(seconds(input.duration), signal);
      return undefined;
    default:
      throw new ActionError(action ? `the action "${action}" is not supported here` : 'the input names no action');
  }
}

async function moveTo(driven: DrivenPage, to: { x: number; y: number }): Promise<void> {
  await driven.page.mouse.move(to.x, to.y);
  driven.cursor = to;
}

/** Holds the modifier keys the tool names in `text` (e.g. `shift`) around `act`. */
async function withModifiers(page: Page, modifiers: unknown, act: () => Promise<void>): Promise<void> {
  const keys = typeof modifiers === 'string' && modifiers ? modifiers.split('+').map((key) => playwrightKey(key)) : [];
  for (const key of keys) await page.keyboard.down(key);
  try {
    await act();
  } finally {
    for (const key of keys.reverse()) await page.keyboard.up(key);
  }
}

/**
 * Carries out `act` and lets what it set off arrive before the next screenshot: a navigation it
 * started (a link, a form, a redirect after a post) is waited for until the new page has loaded;
 * anything else gets a moment to draw.
 */
async function settle(page: Page, act: () => Promise<void>): Promise<void> {
  let navigated: Promise<unknown> | undefined;
  const onRequest = (request: Request) => {
    if (navigated || !request.isNavigationRequest() || request.frame() !== page.mainFrame()) return;
    navigated = page.waitForEvent('framenavigated', { predicate: (frame) => frame === page.mainFrame(), timeout: NAVIGATION_TIMEOUT_MS }).catch(() => undefined);
  };
  page.on('request', onRequest);
  try {
    await act();
    await page.waitForTimeout(150);
  } finally {
    page.off('request', onRequest);
  }
  if (navigated) await navigated;
  await page.waitForLoadState('load', { timeout: NAVIGATION_TIMEOUT_MS }).catch(() => undefined);
}

function coordinate(value: unknown, name: string): { x: number; y: number } {
  if (!Array.isArray(value) || value.length !== 2 || !value.every((n) => Number.isInteger(n))) {
    throw new ActionError(`${name} must be [x, y] in whole pixels`);
  }
  const [x, y] = value as [number, number];
  if (x < 0 || y < 0 || x >= VIEWPORT.width || y >= VIEWPORT.height) {
    throw new ActionError(`${name} [${x}, ${y}] is outside the ${VIEWPORT.width}×${VIEWPORT.height} screen`);
  }
  return { x, y };
}

function text(value: unknown, name: string): string {
  if (typeof value !== 'string' || value === '') throw new ActionError(`${name} must be a non-empty string`);
  if (value.length > 10_000) throw new ActionError(`${name} is longer than 10 000 characters`);
  return value;
}

function integer(value: unknown, name: string, min: number, max: number): number {
  if (!Number.isInteger(value) || (value as number) < min || (value as number) > max) throw new ActionError(`${name} must be a whole number from ${min} to ${max}`);
  return value as number;
}

function seconds(value: unknown): number {
  if (typeof value !== 'number' || !(value >= 0) || value > MAX_PAUSE_SECONDS) throw new ActionError(`duration must be 0 to ${MAX_PAUSE_SECONDS} seconds`);
  return value;
}

function pause(secondsToWait: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, secondsToWait * 1000);
    signal.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}
