/** Manifest entry point of the triage agent. */
import type { AgentFactory } from '../../runtime/mesh-agent.ts';
import { createTriageAgent } from './triage-agent.ts';

export const createAgent: AgentFactory = (context) => createTriageAgent(context);
