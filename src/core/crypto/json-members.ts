/**
 * A JSON object's UTF-8 bytes with members appended: the same bytes as `JSON.stringify({...object,
 * ...members})` for an object whose JSON is `json` and which has none of those keys (and for names
 * that are not array indices, which a JS object would put first), without serialising or encoding
 * the object again. Signed answers use it to sign a large body and then carry the signature beside
 * it (a 30–150 kB discovery answer, a routing advice).
 */
export function withMembers(json: Buffer, members: Record<string, unknown>): Buffer {
  const appended = membersText(members);
  if (appended === '') return json;
  return Buffer.concat([json.subarray(0, json.length - 1), Buffer.from(json.length === 2 ? `${appended}}` : `,${appended}}`)]);
}

function membersText(members: Record<string, unknown>): string {
  return Object.entries(members)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `${JSON.stringify(key)}:${JSON.stringify(value)}`)
    .join(',');
}

/**
 * An object's JSON bytes with one more member whose value is a compact JWS made by this registry
 * (`compact-jws.ts`: base64url parts and dots), as bytes. Such a JWS needs no escaping, so its JSON
 * string is the JWS between quotes, and the object's bytes are copied, not encoded again:
 * `JSON.stringify` of a 30–150 kB signature scanned every character (5 % of an uncached discovery
 * answer). The same bytes as `withMembers(json, { [name]: jws })`.
 */
export function withCompactJws(json: Buffer, name: string, jws: string): Buffer {
  const member = `${JSON.stringify(name)}:"`;
  const open = json.subarray(0, json.length - 1);
  return Buffer.concat([open, Buffer.from(json.length === 2 ? member : `,${member}`), Buffer.from(jws, 'latin1'), CLOSE]);
}

const CLOSE = Buffer.from('"}');
