import type { AgentRecord } from '../../contract/agent-record.ts';

/** How much each factor contributes to a score (docs/discovery.md). */
export const SCORE_WEIGHTS = { trust_level: 1000, health: 100, jurisdiction: 10 } as const;
const HEALTH_POINTS = { healthy: 2, unknown: 1, unhealthy: 0 } as const;

export type ScoreBreakdown = {
  trust_level: number;
  health: number;
  jurisdiction: number;
  priority: number;
};

/**
 * The discovery score: trust level × 1000 + best endpoint health (healthy 2, unknown 1, unhealthy 0)
 * × 100 + jurisdiction match × 10 + 999 / (100 + best endpoint priority). Each factor's range is
 * smaller than one step of the factor before, so sorting by score is sorting by trust, then health,
 * then jurisdiction, then priority; equal scores are ordered by age (older first), then id.
 */
export function scoreAgent(record: AgentRecord, preferredJurisdiction: string): { score: number; score_breakdown: ScoreBreakdown } {
  const bestHealth = Math.max(...record.endpoints.map((e) => HEALTH_POINTS[e.health.status]));
  const bestPriority = Math.min(...record.endpoints.map((e) => e.priority));
  const breakdown: ScoreBreakdown = {
    trust_level: record.trust_validation.level * SCORE_WEIGHTS.trust_level,
    health: bestHealth * SCORE_WEIGHTS.health,
    jurisdiction: record.jurisdiction === preferredJurisdiction ? SCORE_WEIGHTS.jurisdiction : 0,
    priority: round(999 / (100 + bestPriority)),
  };
  const score = round(breakdown.trust_level + breakdown.health + breakdown.jurisdiction + breakdown.priority);
  return { score, score_breakdown: breakdown };
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
