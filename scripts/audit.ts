// `npm run audit`: the production dependencies (`npm audit --omit=dev`) must have no high or critical
// advisory. Run by .ci/run. A registry that does not serve the advisory endpoint (a mirror answering
// 405, as the one this project's CI uses) cannot be audited: that is said plainly and does not fail the
// run, unless AUDIT_REQUIRED=1, which makes "not audited" a failure too.
import { spawnSync } from 'node:child_process';

const run = spawnSync('npm', ['audit', '--omit=dev', '--json'], { encoding: 'utf8' });
let report: { metadata?: { vulnerabilities?: Record<string, number> }; message?: string; statusCode?: number };
try {
  report = JSON.parse(run.stdout || '{}');
} catch {
  report = { message: (run.stderr || run.stdout || 'no answer').split('\n')[0] ?? 'no answer' };
}
const counts = report.metadata?.vulnerabilities;
if (!counts) {
  console.log(`npm audit: not audited — the registry answered: ${report.message ?? 'nothing usable'}`);
  process.exit(process.env.AUDIT_REQUIRED === '1' ? 1 : 0);
}
const serious = (counts.high ?? 0) + (counts.critical ?? 0);
console.log(`npm audit (production dependencies): ${Object.entries(counts).map(([level, n]) => `${level} ${n}`).join(', ')}`);
if (serious > 0) {
  console.error(`npm audit: ${serious} high or critical advisories; run npm audit --omit=dev for the list`);
  process.exit(1);
}
