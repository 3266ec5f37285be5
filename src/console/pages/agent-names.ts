/**
 * Names, not ids: the display names of the agents a list of events is about, resolved through the
 * registry (`GET /v1/agents/{id}`) at the time the page is drawn — never stored, so a renamed agent
 * shows its current name, and one the registry no longer answers for keeps its id.
 */
import type { RegistryClient } from '../../client/registry-client.ts';
import { html, type View } from '../views/html.ts';

/** The last part of an agent's URI (`registry://…/agents/<id>`), or undefined when `subject` is not an agent. */
export function agentIdOf(subject: string): string | undefined {
  return subject.includes('/agents/') ? subject.slice(subject.lastIndexOf('/') + 1) : undefined;
}

/** The names of the agents among `subjects` (each looked up once, in parallel), by subject. */
export async function agentNames(registry: RegistryClient, subjects: readonly string[]): Promise<ReadonlyMap<string, string>> {
  const distinct = [...new Set(subjects)].filter((subject) => agentIdOf(subject) !== undefined);
  const answers = await Promise.all(distinct.map((subject) => registry.getAgent(agentIdOf(subject) as string)));
  const names = new Map<string, string>();
  answers.forEach((answer, index) => {
    if (answer.ok && typeof answer.body.display_name === 'string') names.set(distinct[index] as string, answer.body.display_name);
  });
  return names;
}

/** An event's subject as a person reads it: an agent's name linking to it, its id beneath; else the subject. */
export function SubjectName({ subject, name }: { subject: string; name: string | undefined }): View {
  const id = agentIdOf(subject);
  if (!id) return html`<code>${subject}</code>`;
  return html`<a href=${`/agents/${id}`}>${name ?? html`<code>${subject}</code>`}</a>${name && html`<br /><code class="small muted">${id}</code>`}`;
}
