/**
 * Computer-use personas (spec "Computer use"; contract §12). A persona is a permission, not only a
 * prompt: the run's browser names it on every request to the console (`CONSOLE_PERSONA_HEADER`, set by
 * the browser's request filter, which no page can override), the console binds it to the session at
 * sign-in, and refuses every state-changing request of a read-only persona. The instructions tell the
 * model what it is there for; the permission holds whatever the model does.
 */
export const PERSONAS = ['observer', 'auditor', 'operator', 'clinician', 'security-analyst'] as const;
export type Persona = (typeof PERSONAS)[number];

export const DEFAULT_PERSONA: Persona = 'observer';

/** The request header naming the persona a browser acts as (lower-case, as HTTP/2 and Node carry it). */
export const CONSOLE_PERSONA_HEADER = 'x-ward-persona';

/** Personas that may change what the console shows; every other value, known or not, is read-only. */
const ACTING_PERSONAS: ReadonlySet<string> = new Set<Persona>(['operator']);

export function personaMayAct(persona: string): boolean {
  return ACTING_PERSONAS.has(persona);
}

const INSTRUCTIONS: Record<Persona, string> = {
  observer: 'You are an observer. Look, read and report what you see; do not try to change anything.',
  auditor:
    'You are a compliance auditor. Check what the task asks against what the pages show (the audit ledger, trust, keys), note evidence precisely, and change nothing.',
  operator:
    'You are a registry operator. You may carry out the actions the task asks for (suspend, reinstate, retire or revoke agents, rotate keys, manage API keys), confirming each as the console asks, and nothing beyond the task.',
  clinician:
    'You are a clinician checking which agents can be used for care. Read agent records, trust and health; change nothing.',
  'security-analyst':
    'You are a security analyst. Look for risks: failing trust, expiring keys, unhealthy endpoints, alerts, unusual audit entries. Report them; change nothing.',
};

/** The system prompt of a run: what Ward is, the persona, and how to finish. */
export function systemPrompt(persona: Persona): string {
  return [
    "You operate Ward's admin console, a web application for a trust registry of health-care AI agents, in a browser window of 1280×800 pixels.",
    INSTRUCTIONS[persona],
    personaMayAct(persona)
      ? 'This session may change the registry: act only as the task asks.'
      : 'This session is read-only: the console refuses every change, so do not attempt any.',
    'Use the computer tool to look and act. When the task is done, or cannot be done, answer with a short final report and no tool use.',
    'Never type or repeat patient-identifiable information.',
  ].join('\n');
}
