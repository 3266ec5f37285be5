/** Every registry event type (contract §6); nothing emits a type that is not listed here. */
export const EVENT_TYPES = [
  'agent.registered',
  'agent.updated',
  'agent.suspended',
  'agent.reinstated',
  'agent.retired',
  'agent.revoked',
  'agent.trust_validated',
  'agent.trust_failed',
  'agent.health_changed',
  'registry.registered',
  'registry.revoked',
  'trust.key_rotated',
  'api_key.created',
  'api_key.revoked',
  'computer_use.requested',
  'computer_use.started',
  'computer_use.action',
  'computer_use.blocked',
  'computer_use.ended',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];
