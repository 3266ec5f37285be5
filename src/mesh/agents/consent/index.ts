/** Manifest entry point of the consent agent. */
import type { AgentFactory } from '../../runtime/mesh-agent.ts';
import { createConsentAgent } from './consent-agent.ts';

export const createAgent: AgentFactory = (context) => createConsentAgent(context);
