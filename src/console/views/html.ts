/**
 * The console's view layer: Preact components written with htm's tagged templates (no build step),
 * rendered to strings on the console's server. Preact escapes every text and attribute value, so
 * data from the registry can never become markup; the browser gets finished HTML and the small
 * script in web/console.js.
 */
import { html } from 'htm/preact';
import type { VNode } from 'preact';
import { render } from 'preact-render-to-string';

export { html };
export type View = VNode | string | null | undefined | false | View[];

/** A whole HTML document. */
export function renderDocument(tree: VNode): string {
  return `<!doctype html>${render(tree)}`;
}
