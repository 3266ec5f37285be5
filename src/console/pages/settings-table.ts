/**
 * The settings on `/settings` (issue 33 item 5): every variable the registry and the console read,
 * grouped (registry, authentication and keys, limits, federation, mesh, console, computer use), each
 * with its meaning and default (src/core/settings-catalogue.ts, the docs' own table), its value and
 * where that came from (environment, file, default). The registry's values and sources come from its
 * diagnostics over HTTP; the console's from its own configuration. A secret's value is never drawn,
 * whatever the registry sends: only whether it is set.
 *
 * A search box filters the rows: `?q=` on the server (without script), and the page script filters
 * the same rows as one types (`data-search` holds each row's searchable words).
 */
import { SETTING_GROUPS, SETTINGS, isSecretSetting, sourcesOf, type Setting, type SettingGroup } from '../../core/settings-catalogue.ts';
import type { ConsoleConfig } from '../console-config.ts';
import { html, type View } from '../views/html.ts';

/** What the registry's diagnostics put in place of a secret (src/registry/operations/diagnostics.ts). */
export const REDACTED = '[redacted]';

type Source = 'environment' | 'file' | 'default' | 'unknown';

/** One setting as the page shows it; `reported` is false when its reader did not report it. */
type SettingRow = { setting: Setting; reported: boolean; value: unknown; source: Source };

/** The registry's side, as its diagnostics answered (null when they could not be read). */
export type RegistryReport = { values: Record<string, unknown>; sources: Record<string, string> } | null;

const SOURCE_WORDS: Record<Source, string> = {
  environment: 'environment',
  file: 'file',
  default: 'default',
  unknown: 'not reported',
};

/** The rows of every setting, the registry's and the console's, plus any the registry reports that this console does not know. */
export function settingRows(registry: RegistryReport, config: ConsoleConfig): SettingRow[] {
  const consoleSources = sourcesOf(config) ?? {};
  const known = SETTINGS.map((setting): SettingRow => {
    if (setting.readBy === 'console') {
      const value = (config as Record<string, unknown>)[setting.name];
      return { setting, reported: true, value, source: consoleSources[setting.name] ?? 'unknown' };
    }
    const reported = registry !== null && setting.name in registry.values;
    return { setting, reported, value: registry?.values[setting.name], source: sourceOf(registry?.sources[setting.name]) };
  });
  const unknown = registry
    ? Object.keys(registry.values)
        .filter((name) => !SETTINGS.some((setting) => setting.name === name))
        .map((name): SettingRow => ({
          setting: { name, group: 'registry', default: 'not known to this console', meaning: 'A setting of a newer registry than this console describes.' },
          reported: true,
          value: registry.values[name],
          source: sourceOf(registry.sources[name]),
        }))
    : [];
  return [...known, ...unknown];
}

function sourceOf(value: string | undefined): Source {
  return value === 'environment' || value === 'file' || value === 'default' ? value : 'unknown';
}

/** The words a search looks through: name, meaning, default, group, source and a non-secret value. */
function searchWords(row: SettingRow, groupTitle: string): string {
  const value = isSecretSetting(row.setting.name) || row.value === REDACTED ? '' : displayValue(row.value);
  return [row.setting.name, row.setting.meaning, row.setting.default, groupTitle, SOURCE_WORDS[row.source], value].join(' ').replace(/`/g, '').toLowerCase();
}

/** Whether a row matches a query: every word of it appears somewhere in the row. */
export function matchesQuery(words: string, query: string | undefined): boolean {
  if (!query) return true;
  return query.toLowerCase().split(/\s+/).filter(Boolean).every((word) => words.includes(word));
}

function displayValue(value: unknown): string {
  if (value === null || value === undefined || value === '') return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Text with `code` spans, as the catalogue writes them. */
export function Words({ text }: { text: string }): View {
  return html`${text.split('`').map((part, index) => (index % 2 === 1 ? html`<code>${part}</code>` : part))}`;
}

function Value({ row, port }: { row: SettingRow; port: string | undefined }): View {
  const { setting, value } = row;
  if (!row.reported) return html`<span class="muted">not reported by the registry</span>`;
  const unset = value === null || value === undefined || value === '';
  // A secret is never drawn, even when a registry sends it: only whether it is set.
  if (isSecretSetting(setting.name) || value === REDACTED) {
    return unset ? html`<span class="muted">not set</span>` : html`<span class="secret-value">set</span> <span class="small muted">(a secret: never shown)</span>`;
  }
  if (unset) return html`<span class="muted">not set</span>`;
  const note = setting.name === 'CONSOLE_PORT' && value === 0 && port ? html` <span class="small muted">(any free port; this one answers at ${port})</span>` : null;
  return html`<code class="setting-value">${displayValue(value)}</code>${note}`;
}

/**
 * The search box and one section per group. `query` hides what does not match (the page script
 * takes over as one types); `host` is where this console answers, for a port chosen at start.
 */
export function SettingGroups({ rows, query, host, registryNote, extras }: { rows: readonly SettingRow[]; query: string | undefined; host: string | undefined; registryNote: View; extras: Partial<Record<SettingGroup, View>> }): View {
  const titles = new Map<SettingGroup, string>(SETTING_GROUPS);
  const shown = rows.filter((row) => matchesQuery(searchWords(row, titles.get(row.setting.group) ?? ''), query)).length;
  return html`
    <section id="settings-search" class="panel" aria-labelledby="settings-search-title">
      <div class="panel-head"><h2 id="settings-search-title">All settings</h2></div>
      <p class="small muted">${registryNote} Each setting is read once at start: change it in the environment of the process that reads it (registry or console) and restart that process. A secret's value is never shown, only whether it is set.</p>
      <form method="get" action="/settings#settings-search" role="search" aria-label="Settings" class="search-row" data-setting-search>
        <label for="setting-q">Find a setting</label>
        <input type="search" id="setting-q" name="q" value=${query ?? ''} autocomplete="off" spellcheck="false" aria-describedby="setting-count" placeholder="name, meaning or value" />
        <button type="submit">Find</button>
        ${query ? html`<a href="/settings#settings-search">Show all</a>` : null}
      </form>
      <p id="setting-count" class="small" role="status" data-total=${rows.length}>${shown === rows.length ? `All ${rows.length} settings shown.` : `${shown} of ${rows.length} settings match.`}</p>
    </section>
    ${SETTING_GROUPS.map(([group, title]) => {
      const inGroup = rows.filter((row) => row.setting.group === group);
      const matching = inGroup.filter((row) => matchesQuery(searchWords(row, title), query));
      return html`<section id=${`settings-${group}`} class="panel setting-group" aria-labelledby=${`settings-${group}-title`} hidden=${matching.length === 0 ? true : undefined} data-setting-group>
        <div class="panel-head"><h2 id=${`settings-${group}-title`}>${title}</h2></div>
        <details class="setting-details" data-setting-details open=${query ? true : undefined}>
        <summary>${inGroup.length === 1 ? '1 setting' : `${inGroup.length} settings`}</summary>
        <table class="settings-table stack-narrow" id=${`settings-${group}-table`}>
          <caption class="sr-only">${title} settings: meaning, value, default and where the value came from</caption>
          <thead><tr><th scope="col">Setting</th><th scope="col">Value</th><th scope="col">Default</th><th scope="col">From</th></tr></thead>
          <tbody>${inGroup.map((row) => html`<tr data-variable=${row.setting.name} data-search=${searchWords(row, title)} hidden=${matching.includes(row) ? undefined : true}>
            <th scope="row" data-label="Setting"><code class="setting-name">${row.setting.name}</code><span class="setting-meaning"><${Words} text=${row.setting.meaning} /></span></th>
            <td data-label="Value"><${Value} row=${row} port=${host} /></td>
            <td data-label="Default"><${Words} text=${row.setting.default} /></td>
            <td data-label="From" class=${`source source-${row.source}`}>${SOURCE_WORDS[row.source]}</td>
          </tr>`)}</tbody>
        </table>
        </details>
        ${extras[group] ?? null}
      </section>`;
    })}`;
}
