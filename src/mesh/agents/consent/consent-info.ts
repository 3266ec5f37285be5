import type { AgentInfo } from '../../runtime/mesh-agent.ts';

/** The consent agent's card information (also what its registry record says). */
export const CONSENT_AGENT_INFO: AgentInfo = {
  alias: 'consent',
  name: 'Ward Consent Service',
  description: 'Records, checks and revokes patient consent for a requester, a patient reference and a purpose of use.',
  version: '0.1.0',
  consentSupport: true,
  skills: [
    {
      id: 'consent.verify',
      name: 'Verify consent',
      description: 'Whether a requester holds consent for a patient reference and purpose (consent/check); grant and revoke too.',
      tags: ['consent', 'privacy', 'governance'],
      examples: ['consent/check {requester, patient_ref, purpose}'],
    },
  ],
};
