/**
 * Names that may not be what they look like (docs/console.md, "Names"; issue 48). The registry refuses
 * bidirectional controls and invisible characters in new names and compares names by their confusable
 * skeleton, but a name may still mix writing systems (`NНS Тriage`: Latin with Cyrillic Н and Т), and
 * records stored before those rules may hold anything. Such a name is shown as it is, inside `<bdi>`
 * so it cannot reorder the text around it, with a warning saying what is odd about it.
 */
import { mixedScripts } from '../../core/names/mixed-script.ts';
import { firstRefusedCharacter } from '../../core/names/name-characters.ts';
import { html, type View } from './html.ts';

/** What is odd about `name`, as sentences for a person; empty when nothing is. */
export function nameWarnings(name: string): string[] {
  const warnings: string[] = [];
  const scripts = mixedScripts(name);
  if (scripts.length > 0) warnings.push(`Mixes ${listOf(scripts)} letters: it may be made to look like another name.`);
  const refused = firstRefusedCharacter(name);
  if (refused) warnings.push(`Holds ${refused.codePoint}, ${refused.kind}, which the registry now refuses in names: it may not read as what it is.`);
  return warnings;
}

function listOf(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}

/** A name as text, isolated from the text around it. */
export function Name({ name }: { name: string }): View {
  return html`<bdi>${name}</bdi>`;
}

/** The warning beside a name in a list, or nothing: a badge and the reason, for eyes and screen readers alike. */
export function NameWarning({ name }: { name: string }): View {
  const warnings = nameWarnings(name);
  if (warnings.length === 0) return null;
  return html`<br /><span class="name-warning small" data-name-warning=""><span class="badge badge-warning">Check the name</span> ${warnings.join(' ')}</span>`;
}

/** The same warning as a notice at the top of a record: which name (`what`) and why. */
export function NameNotice({ name, what }: { name: string; what: string }): View {
  const warnings = nameWarnings(name);
  if (warnings.length === 0) return null;
  return html`<div class="notice notice-warning" role="note" data-name-warning="">
    <strong>Check the ${what}:</strong> <${Name} name=${name} />. ${warnings.join(' ')} Compare it with the organisation's other agents before acting on it.
  </div>`;
}
