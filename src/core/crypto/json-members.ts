/**
 * A JSON object's text with members appended: the same bytes as `JSON.stringify({...object,
 * ...members})` for an object whose text is `json` and which has none of those keys (and for names
 * that are not array indices, which a JS object would put first), without serialising the object
 * again. Signed answers use it to sign a large body and then carry the
 * signature beside it, serialising the body once (a 30–150 kB discovery answer, a routing advice).
 */
export function withMembers(json: string, members: Record<string, unknown>): string {
  const appended = Object.entries(members)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `${JSON.stringify(key)}:${JSON.stringify(value)}`)
    .join(',');
  if (appended === '') return json;
  return json === '{}' ? `{${appended}}` : `${json.slice(0, -1)},${appended}}`;
}
