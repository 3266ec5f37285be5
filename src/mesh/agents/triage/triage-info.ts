import type { AgentInfo } from '../../runtime/mesh-agent.ts';

/** The triage agent's card information (also what its registry record says). */
export const TRIAGE_AGENT_INFO: AgentInfo = {
  alias: 'triage',
  name: 'Ward Triage Assistant',
  description: 'Rule-based urgency assessment from a chief complaint and vital signs (NEWS2 bands and red-flag complaints).',
  version: '0.1.0',
  consentSupport: true,
  skills: [
    {
      id: 'triage.assess',
      name: 'Assess urgency',
      description: 'Urgency (low, medium, high, critical, emergency) with NEWS2 score, red flags and a recommended action.',
      tags: ['triage', 'urgency', 'news2'],
      examples: ['triage/assess {chief_complaint: "chest pain", vital_signs: {heart_rate: 118, …}}'],
    },
  ],
};
