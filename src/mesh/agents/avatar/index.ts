/** Manifest entry point of the clinician avatar agent. */
import type { AgentFactory } from '../../runtime/mesh-agent.ts';
import { createAvatarAgent } from './avatar-agent.ts';

export const createAgent: AgentFactory = (context) => createAvatarAgent({ config: context.config, clock: context.clock });
