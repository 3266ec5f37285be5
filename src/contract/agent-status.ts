import type { AgentStatus } from './agent-record.ts';

/** The status actions of contract §3, each with the states it may start from and where it leads. */
export const STATUS_ACTIONS = {
  suspend: { from: ['active'], to: 'suspended', event: 'agent.suspended', reasonRequired: true },
  reinstate: { from: ['suspended'], to: 'active', event: 'agent.reinstated', reasonRequired: false },
  retire: { from: ['active', 'suspended'], to: 'retired', event: 'agent.retired', reasonRequired: false },
  revoke: { from: ['active', 'suspended', 'retired'], to: 'revoked', event: 'agent.revoked', reasonRequired: true },
} as const satisfies Record<
  string,
  { from: readonly AgentStatus[]; to: AgentStatus; event: string; reasonRequired: boolean }
>;

export type StatusAction = keyof typeof STATUS_ACTIONS;
export const STATUS_ACTION_NAMES = Object.keys(STATUS_ACTIONS) as StatusAction[];

/** The status an action leads to from `current`, or `undefined` when the move is not allowed. */
export function nextStatus(current: AgentStatus, action: StatusAction): AgentStatus | undefined {
  const rule = STATUS_ACTIONS[action];
  return (rule.from as readonly AgentStatus[]).includes(current) ? rule.to : undefined;
}

/** Revoked and retired records are frozen: no update, and (for revoked) no way back. */
export function isMutable(status: AgentStatus): boolean {
  return status === 'active' || status === 'suspended';
}
