/**
 * The proxy every computer-use browser context sends all of its traffic through (docs/computer-use.md,
 * "Where it may go"). Chromium sends every hop of every navigation here: the first request and each
 * redirect after it, meta refreshes, script navigations, pop-ups, downloads, WebSocket and TLS tunnels.
 * The browser's own request filter (`context.route`) sees only the first hop of a redirect chain, so
 * the allowlist is enforced here, where nothing can go round it:
 *
 * - a request to an origin off the list is answered 403 by the proxy and reaches nothing;
 * - a redirect from an allowed origin to one off the list is not passed on: the browser gets a 403
 *   page instead of the `Location`, so it never even tries the next hop;
 * - a tunnel (CONNECT: `https:`, `wss:`, and `ws:` through a proxy) opens only to a host and port of
 *   the list, and never to another port of the console's own host while the console's cookies could
 *   ride in it (a tunnel's contents cannot be filtered).
 *
 * It also keeps credentials on the console: requests to any other origin lose the `Authorization`
 * header, the persona header and every cookie the console has set, and only requests to the console
 * carry the persona header. Written by hand (node:http, about a hundred lines): the filtering is the
 * whole of it, and the maintained forward proxies filter by host at best, not by origin and hop.
 */
import { createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';

/**
 * A request the browser tried to make and the proxy (or the browser's filter) refused: its address,
 * and where it was going (the URL's origin; a tunnel's `host:port`, which is all a CONNECT names).
 */
export type BlockedRequest = { readonly url: string; readonly origin: string; readonly kind: BlockedKind };
export type BlockedKind = 'request' | 'redirect' | 'tunnel';

/** Marks the proxy's own refusals, so a caller can tell them from a page's answer. */
export const BLOCKED_HEADER = 'x-ward-blocked';

export type OriginGuardProxy = {
  /** `http://127.0.0.1:<port>`, for the browser context's `proxy.server`. */
  readonly server: string;
  /** Names of the cookies the console has set, stripped from requests to any other origin. */
  readonly consoleCookies: Set<string>;
  close(): Promise<void>;
};

export type OriginGuardOptions = {
  readonly allowedOrigins: readonly string[];
  /** The console's origin: the only one that is sent the persona and keeps its cookies. */
  readonly consoleOrigin: string;
  readonly persona?: string | undefined;
  readonly personaHeader: string;
  readonly onBlocked: (blocked: BlockedRequest) => void;
};

const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade'];

export async function startOriginGuardProxy(options: OriginGuardOptions): Promise<OriginGuardProxy> {
  const consoleCookies = new Set<string>();
  const sockets = new Set<Socket>();
  const consoleUrl = new URL(options.consoleOrigin);

  function refuse(response: ServerResponse, blocked: BlockedRequest, why: string): void {
    options.onBlocked(blocked);
    response.writeHead(403, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', [BLOCKED_HEADER]: blocked.kind });
    response.end(`<!doctype html><html lang="en"><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Blocked</title><h1>Blocked</h1><p>${escapeHtml(why)}</p></html>`);
  }

  function forward(request: IncomingMessage, response: ServerResponse): void {
    const target = parseAbsolute(request.url);
    if (!target || target.protocol !== 'http:') {
      response.writeHead(400).end();
      return;
    }
    if (!options.allowedOrigins.includes(target.origin)) {
      refuse(response, { url: target.href, origin: target.origin, kind: 'request' }, `${target.origin} is not an origin computer use may open.`);
      return;
    }
    const toConsole = target.origin === consoleUrl.origin;
    const upstream = httpRequest(
      { host: unbracketed(target.hostname), port: target.port || 80, method: request.method, path: `${target.pathname}${target.search}`, headers: outgoingHeaders(request.headers, toConsole) },
      (answer) => {
        const location = answer.headers.location;
        if (answer.statusCode && answer.statusCode >= 300 && answer.statusCode < 400 && location) {
          const next = parseRelative(location, target);
          if (!next || !options.allowedOrigins.includes(next.origin)) {
            answer.resume();
            refuse(response, { url: next?.href ?? location, origin: next?.origin ?? location, kind: 'redirect' }, `${target.origin} redirected to ${next?.origin ?? 'an unreadable address'}, which computer use may not open.`);
            return;
          }
        }
        if (toConsole) for (const name of cookieNames(answer.headers['set-cookie'])) consoleCookies.add(name);
        const headers = { ...answer.headers };
        for (const name of HOP_BY_HOP) delete headers[name];
        response.writeHead(answer.statusCode ?? 502, headers);
        answer.pipe(response);
      },
    );
    upstream.on('error', () => {
      if (!response.headersSent) response.writeHead(502, { 'content-type': 'text/plain' });
      response.end();
    });
    request.pipe(upstream);
  }

  function outgoingHeaders(incoming: IncomingHttpHeaders, toConsole: boolean): IncomingHttpHeaders {
    const headers = { ...incoming };
    for (const name of HOP_BY_HOP) delete headers[name];
    delete headers[options.personaHeader];
    if (toConsole) {
      if (options.persona !== undefined) headers[options.personaHeader] = options.persona;
      return headers;
    }
    delete headers.authorization;
    const kept = (headers.cookie ?? '')
      .split(';')
      .map((pair) => pair.trim())
      .filter((pair) => pair && !consoleCookies.has(pair.split('=')[0]?.trim() ?? ''));
    if (kept.length > 0) headers.cookie = kept.join('; ');
    else delete headers.cookie;
    return headers;
  }

  /** A tunnel: its contents pass unseen, so only where it goes is checked. */
  function tunnel(request: IncomingMessage, client: Socket, head: Buffer): void {
    const [host, portText] = splitHostPort(request.url ?? '');
    const port = Number(portText);
    const allowed = options.allowedOrigins.some((origin) => {
      const url = new URL(origin);
      return url.hostname === host && portOf(url) === port;
    });
    const carriesConsoleCookies = host === consoleUrl.hostname && port !== portOf(consoleUrl);
    if (!allowed || carriesConsoleCookies || !Number.isInteger(port)) {
      options.onBlocked({ url: request.url ?? '', origin: request.url ?? '', kind: 'tunnel' });
      client.end(`HTTP/1.1 403 Forbidden\r\n${BLOCKED_HEADER}: tunnel\r\ncontent-length: 0\r\n\r\n`);
      return;
    }
    const upstream = connect(port, unbracketed(host), () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    const close = () => {
      upstream.destroy();
      client.destroy();
    };
    upstream.on('error', close);
    client.on('error', close);
  }

  const server = createServer(forward);
  server.on('connect', tunnel);
  // A WebSocket asked for in absolute form (Chromium tunnels instead): nothing is forwarded that way.
  server.on('upgrade', (request: IncomingMessage, socket: Socket) => {
    options.onBlocked({ url: request.url ?? '', origin: originOf(request.url ?? '') ?? '', kind: 'request' });
    socket.end(`HTTP/1.1 403 Forbidden\r\n${BLOCKED_HEADER}: request\r\ncontent-length: 0\r\n\r\n`);
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    server: `http://127.0.0.1:${port}`,
    consoleCookies,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

function parseAbsolute(url: string | undefined): URL | undefined {
  try {
    return url && /^[a-z][a-z0-9+.-]*:\/\//i.test(url) ? new URL(url) : undefined;
  } catch {
    return undefined;
  }
}

function parseRelative(location: string, base: URL): URL | undefined {
  try {
    return new URL(location, base);
  } catch {
    return undefined;
  }
}

function splitHostPort(authority: string): [string, string] {
  const bracketed = /^\[([^\]]+)\]:(\d+)$/.exec(authority);
  if (bracketed) return [`[${bracketed[1]}]`, bracketed[2] ?? ''];
  const at = authority.lastIndexOf(':');
  return at < 0 ? [authority, ''] : [authority.slice(0, at), authority.slice(at + 1)];
}

/** The origin of `url`, or undefined when no parser reads it. */
export function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

/** The port a URL reaches, its scheme's default when it names none. */
function portOf(url: URL): number {
  return Number(url.port || (url.protocol === 'https:' || url.protocol === 'wss:' ? 443 : 80));
}

/** A URL writes an IPv6 host in brackets; a socket is opened to the address without them. */
function unbracketed(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

function cookieNames(setCookie: string[] | undefined): string[] {
  return (setCookie ?? []).map((line) => line.split('=')[0]?.trim() ?? '').filter(Boolean);
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}
