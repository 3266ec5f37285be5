// The baseline: bare Fastify answering a fixed JSON document of BARE_BYTES bytes, nothing else.
import Fastify from 'fastify';

const bytes = Number(process.env.BARE_BYTES ?? 1000);
const document = JSON.stringify({ results: [{ padding: 'x'.repeat(Math.max(0, bytes - 30)) }] });
const app = Fastify({ logger: false });
app.get('/doc', async (_request, reply) => reply.type('application/json').send(document));
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
console.log(`listening on http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`);
