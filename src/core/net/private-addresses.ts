import { BlockList, isIP } from 'node:net';

/**
 * Loopback, private, link-local, carrier-grade NAT, benchmarking (198.18.0.0/15), multicast, reserved
 * (240.0.0.0/4, broadcast included) and unspecified ranges (IPv4 and IPv6).
 */
const PRIVATE = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  PRIVATE.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  // ::/96 holds the unspecified address, loopback and the deprecated IPv4-compatible ::a.b.c.d: none is a public host.
  ['::', 96],
  ['::1', 128],
  // NAT64 local-use prefix (RFC 8215): translated to whatever the site's gateway decides.
  ['64:ff9b:1::', 48],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  PRIVATE.addSubnet(network, prefix, 'ipv6');
}

/** The 16 bytes of an IPv6 address (a dotted IPv4 tail read as its 4 bytes), or undefined. */
function ipv6Bytes(address: string): number[] | undefined {
  let text = address.toLowerCase().replace(/%.*$/, '');
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? (text.split('::') as [string, string]) : [text, undefined];
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':');
  const missing = 8 - headGroups.length - tailGroups.length;
  if (missing < 0 || (tail === undefined && missing !== 0)) return undefined;
  const groups = [...headGroups, ...Array<string>(missing).fill('0'), ...tailGroups];
  return groups.flatMap((group) => {
    const value = Number.parseInt(group, 16);
    return [value >> 8, value & 0xff];
  });
}

/**
 * The IPv4 address an IPv6 address carries to an IPv4 host, if any: IPv4-mapped (::ffff:0:0/96, in
 * dotted or hex spelling), IPv4-translated (::ffff:0:0:0/96), NAT64 (64:ff9b::/96) and 6to4 (2002::/16). Its IPv4 address decides.
 */
function embeddedIpv4(address: string): string | undefined {
  const bytes = ipv6Bytes(address);
  if (!bytes) return undefined;
  const zeros = (from: number, to: number) => bytes.slice(from, to).every((byte) => byte === 0);
  const quad = (from: number) => bytes.slice(from, from + 4).join('.');
  if (zeros(0, 10) && bytes[10] === 0xff && bytes[11] === 0xff) return quad(12);
  // IPv4-translated (SIIT, ::ffff:0:0/96).
  if (zeros(0, 8) && bytes[8] === 0xff && bytes[9] === 0xff && zeros(10, 12)) return quad(12);
  if (bytes[0] === 0x00 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b && zeros(4, 12)) return quad(12);
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return quad(2);
  return undefined;
}

/** Whether an IP address is in a private, loopback, link-local or otherwise non-public range (IPv4 carried in IPv6 included). */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  if (family === 4) return PRIVATE.check(address, 'ipv4');
  const carried = embeddedIpv4(address);
  if (carried !== undefined && PRIVATE.check(carried, 'ipv4')) return true;
  return PRIVATE.check(address, 'ipv6');
}
