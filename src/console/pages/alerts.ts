/**
 * `/alerts`: the conditions of ../alerts/alert-rules.ts that hold now, most severe first, each with
 * when it started and a link to what it concerns; the checks that could not run, said as such (an
 * alert that could not be looked for is not the same as no alert); and the rules themselves, so the
 * page documents what "no open alert" means. Nothing is acknowledged or stored: an alert is open
 * exactly while its condition holds, and the list follows the registry live.
 */
import type { FastifyInstance } from 'fastify';
import { currentAlerts } from '../alerts/alert-cache.ts';
import { ALERT_RULES, type Alert, type AlertRule, type AlertSeverity } from '../alerts/alert-rules.ts';
import { html, type View } from '../views/html.ts';
import { Badge, Empty, Problem, Section, Time } from '../views/parts.ts';
import { sendPage } from '../views/send-page.ts';
import { credentialRefused, selfUrl, signInAgain, type Failure } from './page-kit.ts';

const SEVERITIES: readonly AlertSeverity[] = ['critical', 'warning', 'info'];
const RULE_NAMES = Object.keys(ALERT_RULES) as AlertRule[];

export function registerAlertsPage(app: FastifyInstance): void {
  app.get('/alerts', async (request, reply) => {
    const report = await currentAlerts(request.registry);
    if (credentialRefused(request, ...report.failures)) return signInAgain(request, reply);
    const { alerts } = report;
    const failures = distinct(report.failures);
    const bySeverity = new Map(SEVERITIES.map((severity) => [severity, alerts.filter((alert) => alert.severity === severity)]));
    const title = alerts.length === 0 ? 'Open alerts' : `${alerts.length} open alert${alerts.length === 1 ? '' : 's'}`;
    // The page is a report on the checks: one that could not run is part of it (200); but when the
    // registry did not answer at all, nothing could be checked and the page says so as every page does (503).
    const unreachable = failures.length > 0 && failures.every((failure) => failure.status === null);
    return sendPage(
      request,
      reply,
      { page: 'alerts', title: 'Alerts', live: true, status: unreachable ? 503 : 200 },
      html`
        <${Section} id="alert-list" title=${title} live=${selfUrl(request)}>
          <p class="small muted">Checked <${Time} at=${report.checkedAt} />. ${alerts.length > 0 &&
            SEVERITIES.map((severity) => `${bySeverity.get(severity)?.length ?? 0} ${severity}`).join(', ')}</p>
          ${(failures.length > 0 || report.unchecked.length > 0) &&
          html`<div class="stack" id="alert-check-failures">
            <h3>${failures.length === 1 ? 'A check could not run' : 'Some checks could not run'}</h3>
            <p class="small">What the registry did not answer could not be checked, so an alert may be missing from this page until it does.${report.unchecked.length > 0 ? ` Not checked now: ${report.unchecked.map(ruleName).join(', ')}.` : ''}</p>
            ${failures.map((failure) => html`<${Problem} envelope=${failure.envelope} status=${failure.status} />`)}
          </div>`}
          ${alerts.length === 0
            ? html`<${Empty}>No open alert${failures.length > 0 ? ' among the checks that ran' : ''}: none of the conditions listed under “What is checked” holds now.<//>`
            : AlertTable({ alerts })}
        <//>
        <${Section} id="alert-rules" title="What is checked">
          <p class="small muted">Each time this page is opened (or refreshed live), the console asks the registry and raises an alert for every condition below that holds. An alert closes by itself when its condition no longer holds.</p>
          <div class="table-wrap" tabindex="0" role="region" aria-label="Alert rules table"><table>
            <thead><tr><th scope="col">Rule</th><th scope="col">Condition</th></tr></thead>
            <tbody>${RULE_NAMES.map((rule) => html`<tr id=${`rule-${rule}`}>
              <th scope="row">${ruleName(rule)}<span class="hide-narrow"><br /><code class="small muted">${rule}</code></span></th>
              <td>${ALERT_RULES[rule]}</td>
            </tr>`)}</tbody>
          </table></div>
        <//>
      `,
    );
  });
}

function AlertTable({ alerts }: { alerts: readonly Alert[] }): View {
  return html`<div class="table-wrap"><table>
    <caption class="muted small">Most severe first, then the oldest. Select an alert to open what it concerns.</caption>
    <thead><tr><th scope="col">Severity</th><th scope="col">Alert</th><th scope="col">Since</th><th scope="col" class="hide-narrow">Rule</th></tr></thead>
    <tbody>
      ${alerts.map((alert) => html`<tr data-alert-id=${alert.id} data-severity=${alert.severity}>
        <td><${Badge} state=${alert.severity} /></td>
        <td><a href=${alert.href}>${alert.title}</a><br /><span class="small">${alert.detail}</span></td>
        <td>${alert.since ? html`<${Time} at=${alert.since} />` : html`<span class="muted">unknown</span>`}</td>
        <td class="hide-narrow"><a href=${`#rule-${alert.rule}`}>${ruleName(alert.rule)}</a></td>
      </tr>`)}
    </tbody>
  </table></div>`;
}

/** `endpoint_down` as a person reads it: "Endpoint down". */
function ruleName(rule: AlertRule): string {
  const words = rule.replace(/_/g, ' ');
  return `${words[0]?.toUpperCase() ?? ''}${words.slice(1)}`;
}

/** The same refusal seen by several checks (a registry that is down fails all of them) is shown once. */
function distinct(failures: readonly Failure[]): Failure[] {
  const seen = new Set<string>();
  return failures.filter((failure) => {
    const key = `${failure.status ?? ''} ${failure.envelope.error.code} ${failure.envelope.error.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
