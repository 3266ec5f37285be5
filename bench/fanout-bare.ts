// The baseline of `npm run bench:fanout`, in its own process as the registry is: bare node:http, where a
// POST writes one frame of FRAME_BYTES to every open GET response and then answers 201 with the frame's id.
import { createServer, type ServerResponse } from 'node:http';

const bytes = Number(process.env.FRAME_BYTES ?? 600);
const open = new Set<ServerResponse>();
let seq = 0;
const server = createServer((request, response) => {
  if (request.method === 'GET') {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    response.flushHeaders();
    open.add(response);
    response.on('close', () => open.delete(response));
    return;
  }
  request.resume();
  request.on('end', () => {
    seq += 1;
    const head = `id: ${seq}\nevent: agent.registered\ndata: `;
    const frame = `${head}${'x'.repeat(Math.max(0, bytes - head.length - 2))}\n\n`;
    for (const subscriber of open) subscriber.write(frame);
    response.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ seq: String(seq) }));
  });
});
server.listen(0, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${(server.address() as { port: number }).port}`));
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
