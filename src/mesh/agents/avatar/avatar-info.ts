import type { AgentInfo } from '../../runtime/mesh-agent.ts';

/** The clinician avatar's card information (also what its registry record says). */
export const AVATAR_AGENT_INFO: AgentInfo = {
  alias: 'clinician_avatar',
  name: 'Ward Clinician Avatar',
  description: 'Structured, deterministic consultations (ABCDE, SOCRATES, Calgary-Cambridge) with red-flag escalation.',
  version: '0.1.0',
  consentSupport: true,
  skills: [
    {
      id: 'consultation.structured',
      name: 'Structured consultation',
      description: 'Runs a consultation step by step in the framework the case calls for, and summarises findings and red flags.',
      tags: ['consultation', 'avatar', 'socrates', 'abcde', 'calgary-cambridge'],
      examples: ['avatar/start_session {patient_case: {chief_complaint: "headache", age: 40, gender: "female", urgency: "low"}, persona: {…}}'],
    },
  ],
};
