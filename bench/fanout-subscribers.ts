// The subscribers of `npm run bench:fanout`, in their own process: `node bench/fanout-subscribers.ts URL COUNT`
// opens COUNT stream readers on URL, prints `ready` once every one is open, and on a line `stop` on its
// standard input closes them and prints, as one JSON line, each frame's arrival times by event id
// (milliseconds since the epoch, from a monotonic clock: comparable with the writer's in another process)
// and the size of one `agent.registered` frame. Apart, so the writer's latency is not the time this
// process takes to read 1 000 frames, and the registry's fan-out and the readers' work show as what they are.
import { get, type IncomingMessage } from 'node:http';
import { createInterface } from 'node:readline';

const [url, countText] = process.argv.slice(2) as [string, string];
const count = Number(countText);
const arrivals: Record<string, number[]> = {};
let frameBytes = 0;
const epochNow = () => performance.timeOrigin + performance.now();

function open(): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const request = get(url, { agent: false, headers: { accept: 'text/event-stream' } }, (response) => {
      let buffer = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        const now = epochNow();
        buffer += chunk;
        let end;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const id = /^id: (\S+)$/m.exec(frame)?.[1];
          if (id && /^event: agent\.registered$/m.test(frame)) frameBytes ||= Buffer.byteLength(frame) + 2;
          if (id) (arrivals[id] ??= []).push(now);
        }
      });
      resolve(response);
    });
    request.on('error', reject);
  });
}

const responses: IncomingMessage[] = [];
for (let i = 0; i < count; i += 1) responses.push(await open());
console.log('ready');
for await (const line of createInterface({ input: process.stdin })) {
  if (line.trim() !== 'stop') continue;
  for (const response of responses) response.destroy();
  process.stdout.write(`${JSON.stringify({ arrivals, frameBytes })}\n`, () => process.exit(0));
  break;
}
