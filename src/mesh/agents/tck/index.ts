/** Manifest entry point of the TCK agent (src/mesh/agents/tck/manifest.json). */
export { createAgent } from './tck-agent.ts';
