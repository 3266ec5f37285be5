/**
 * The console's answers for no such page (404), a form without its CSRF token (403), a request it
 * could not read (4xx) and its own failures (500, logged; the page shows nothing of the error).
 */
import fastifyPlugin from 'fastify-plugin';
import { html } from './views/html.ts';
import { sendPage } from './views/send-page.ts';

/**
 * The not-found and error handlers as the `ward-console-error-pages` plugin. Register it before any
 * plugin with routes: a plugin's routes take the error handler in place when it loads.
 */
export const consoleErrorPages = fastifyPlugin(
  async (app) => {
    app.setNotFoundHandler(async (request, reply) =>
      sendPage(request, reply, { title: 'No such page', status: 404 }, html`<p>There is no page at this address. The <a href="/dashboard">dashboard</a> links to every page.</p>`),
    );
    app.setErrorHandler(async (error: Error & { statusCode?: number; code?: string }, request, reply) => {
      if (error.code?.startsWith('FST_CSRF')) {
        return sendPage(request, reply, { title: 'Form refused', status: 403 },
          html`<p role="alert">This form was refused: it carried no valid security token (it may be stale, or sent from elsewhere). Go back, reload the page and try again.</p>`);
      }
      const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
      if (status === 500) request.log.error({ err: error }, 'console page failed');
      return sendPage(request, reply, { title: status === 500 ? 'Something went wrong' : 'Request refused', status },
        html`<p role="alert">${status === 500 ? 'The console failed to build this page. The error is in its log.' : 'The request could not be read.'}</p>`);
    });
  },
  { name: 'ward-console-error-pages', fastify: '5.x' },
);
