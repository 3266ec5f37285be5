/**
 * The registry's OpenAPI document with its local `$ref`s written out again (issue 34 names shared
 * schemas and responses): for tests that walk operations and their schemas as if each were whole.
 * A nullable use of a component (`{nullable: true, allOf: [{$ref}]}`) becomes the component with
 * `nullable: true`, the shape the route schema has in the server.
 */
type Json = Record<string, any>;

export function dereference(document: Json): Json {
  const resolve = (ref: string): unknown => {
    if (!ref.startsWith('#/')) throw new Error(`not a local reference: ${ref}`);
    let node: any = document;
    for (const part of ref.slice(2).split('/')) node = node?.[part.replaceAll('~1', '/').replaceAll('~0', '~')];
    if (node === undefined) throw new Error(`unresolved reference: ${ref}`);
    return node;
  };
  const walk = (node: unknown, seen: readonly string[]): unknown => {
    if (Array.isArray(node)) return node.map((item) => walk(item, seen));
    if (typeof node !== 'object' || node === null) return node;
    const object = node as Json;
    if (typeof object.$ref === 'string') {
      if (seen.includes(object.$ref)) throw new Error(`a reference cycle through ${object.$ref}`);
      return walk(resolve(object.$ref), [...seen, object.$ref]);
    }
    if (object.nullable === true && Array.isArray(object.allOf) && object.allOf.length === 1 && Object.keys(object).length === 2) {
      return { ...(walk(object.allOf[0], seen) as Json), nullable: true };
    }
    return Object.fromEntries(Object.entries(object).map(([key, value]) => [key, walk(value, seen)]));
  };
  return walk(document, []) as Json;
}
