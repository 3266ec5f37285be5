import { isIP } from 'node:net';

/** Whether a host name or address (as `URL.hostname` writes it, brackets allowed) is this machine. */
export function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1';
}
