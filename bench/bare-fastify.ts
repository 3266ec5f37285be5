// The baseline: bare Fastify answering fixed JSON documents, nothing else.
// `/doc` answers a document of BARE_BYTES bytes with BARE_STATUS. A bench can also store the exact
// bytes Ward answered (`PUT /docs/:name`) and have `/docs/:name` answer them, so each scenario is
// compared with an answer of the same size and shape. Stored as bytes (a Buffer), as Ward keeps its
// cached and routed answers: a string would be UTF-8 encoded again for every answer, work Ward does
// not do, and the baseline would be the slower of the two (measured: cache hits at 1.07–1.26 of it).
import Fastify from 'fastify';

const bytes = Number(process.env.BARE_BYTES ?? 1000);
const status = Number(process.env.BARE_STATUS ?? 200);
const document = Buffer.from(JSON.stringify({ results: [{ padding: 'x'.repeat(Math.max(0, bytes - 30)) }] }));
const stored = new Map<string, Buffer>();
const app = Fastify({ logger: false, bodyLimit: 16 * 1024 * 1024 });
app.get('/doc', async (_request, reply) => reply.code(status).type('application/json').send(document));
// A POST reads and parses its JSON body, as the registry does, then answers the same document.
app.post('/doc', async (_request, reply) => reply.code(status).type('application/json').send(document));
app.addContentTypeParser('text/plain', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
app.put<{ Params: { name: string }; Body: Buffer }>('/docs/:name', async (request, reply) => {
  stored.set(request.params.name, request.body);
  return reply.code(204).send();
});
app.get<{ Params: { name: string } }>('/docs/:name', async (request, reply) =>
  reply.type('application/json').send(stored.get(request.params.name)),
);
app.post<{ Params: { name: string } }>('/docs/:name', async (request, reply) =>
  reply.type('application/json').send(stored.get(request.params.name)),
);
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
console.log(`listening on http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`);
