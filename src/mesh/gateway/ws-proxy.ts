import { WebSocket, type RawData } from 'ws';

/** Close codes an endpoint may send (RFC 6455 §7.4); others (1005, 1006, 1015) are replaced. */
function sendableCode(code: number, fallback: number): number {
  return (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014) || (code >= 3000 && code <= 4999) ? code : fallback;
}

/**
 * Joins a caller's WebSocket to the agent's `/ws`: frames pass through both ways unchanged (frames
 * sent before the agent side opens wait), and either side closing closes the other with its code.
 */
export function proxyWebSocket(client: WebSocket, url: string, headers: Record<string, string>, onClose: () => void): void {
  const upstream = new WebSocket(url, { headers });
  const pending: { data: RawData; binary: boolean }[] = [];
  let closed = false;
  const finish = () => {
    if (closed) return;
    closed = true;
    onClose();
  };
  client.on('message', (data, binary) => {
    if (upstream.readyState === WebSocket.OPEN) upstream.send(data, { binary });
    else pending.push({ data, binary });
  });
  upstream.on('open', () => {
    for (const { data, binary } of pending.splice(0)) upstream.send(data, { binary });
  });
  upstream.on('message', (data, binary) => {
    if (client.readyState === WebSocket.OPEN) client.send(data, { binary });
  });
  upstream.on('close', (code, reason) => {
    // 1006: the agent's connection dropped without a close frame (the agent died). The caller is told
    // so (1011), not that the session ended normally; 1005 (a close frame without a code) is normal.
    if (client.readyState === WebSocket.OPEN) {
      if (code === 1006) client.close(1011, 'agent connection lost');
      else client.close(sendableCode(code, 1000), reason);
    }
    finish();
  });
  upstream.on('error', () => {
    if (client.readyState === WebSocket.OPEN) client.close(1011, 'agent connection failed');
    finish();
  });
  client.on('close', (code, reason) => {
    if (upstream.readyState === WebSocket.OPEN) upstream.close(sendableCode(code, 1000), reason);
    else if (upstream.readyState === WebSocket.CONNECTING) upstream.terminate();
    finish();
  });
}
