// The baseline: bare Fastify answering a fixed JSON document of BARE_BYTES bytes, nothing else.
import Fastify from 'fastify';

const bytes = Number(process.env.BARE_BYTES ?? 1000);
const status = Number(process.env.BARE_STATUS ?? 200);
const document = JSON.stringify({ results: [{ padding: 'x'.repeat(Math.max(0, bytes - 30)) }] });
const app = Fastify({ logger: false });
app.get('/doc', async (_request, reply) => reply.code(status).type('application/json').send(document));
// A POST reads and parses its JSON body, as the registry does, then answers the same document.
app.post('/doc', async (_request, reply) => reply.code(status).type('application/json').send(document));
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
console.log(`listening on http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`);
