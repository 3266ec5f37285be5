/** The pure parts of computer use: the tool version a model speaks, and the tool's key names in Playwright's terms. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ActionError, playwrightKey } from '../../src/computer-use/browser-actions.ts';
import { computerToolFor } from '../../src/computer-use/computer-use-model.ts';
import { personaMayAct, PERSONAS, systemPrompt } from '../../src/contract/personas.ts';

describe('computer use: tool versions, keys and personas', () => {
  test('the computer tool version follows the model', () => {
    for (const model of ['claude-3-7-sonnet-20250219', 'claude-sonnet-4-20250514', 'claude-opus-4-1', 'claude-sonnet-4-5', 'claude-sonnet-4-5-20250929', 'claude-haiku-4-5']) {
      assert.equal(computerToolFor(model).tool.type, 'computer_20250124', model);
      assert.equal(computerToolFor(model).beta, 'computer-use-2025-01-24', model);
    }
    for (const model of ['claude-opus-4-5', 'claude-sonnet-4-6', 'claude-opus-4-7', 'claude-sonnet-5']) {
      assert.equal(computerToolFor(model).tool.type, 'computer_20251124', model);
      assert.equal(computerToolFor(model).beta, 'computer-use-2025-11-24', model);
    }
    assert.deepEqual({ ...computerToolFor('claude-sonnet-4-6').tool, type: undefined }, { type: undefined, name: 'computer', display_width_px: 1280, display_height_px: 800 });
  });

  test('xdotool key names become Playwright keys; unknown ones are the model\'s error', () => {
    assert.equal(playwrightKey('Return'), 'Enter');
    assert.equal(playwrightKey('ctrl+a'), 'Control+a');
    assert.equal(playwrightKey('ctrl+shift+Tab'), 'Control+Shift+Tab');
    assert.equal(playwrightKey('Page_Down'), 'PageDown');
    assert.equal(playwrightKey('BackSpace'), 'Backspace');
    assert.equal(playwrightKey('super+l'), 'Meta+l');
    assert.equal(playwrightKey('F5'), 'F5');
    assert.equal(playwrightKey('space'), ' ');
    assert.throws(() => playwrightKey('Hyper_L'), ActionError);
  });

  test('only the operator may act; every persona has instructions', () => {
    assert.deepEqual(PERSONAS.filter(personaMayAct), ['operator']);
    assert.equal(personaMayAct('Operator'), false, 'exact names only');
    for (const persona of PERSONAS) assert.match(systemPrompt(persona), personaMayAct(persona) ? /may change the registry/ : /read-only/);
  });
});
