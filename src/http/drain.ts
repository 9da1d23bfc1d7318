import type { FastifyInstance } from 'fastify';
import { serviceUnavailable } from '../shared/errors.js';
import { messages } from '../shared/messages.js';

/**
 * SPEC §12 shutdown, for the part Fastify leaves to us (the app is built with
 * `return503OnClosing: false`): once `app.close()` starts, a new request on a kept-alive connection
 * gets 503 `service_unavailable` in the SPEC §2 shape, and every answer from then on, those of the
 * requests still in flight included, carries `Connection: close`, so that no connection lingers
 * idle for the keep-alive timeout and holds the shutdown up.
 */
export function installDraining(app: FastifyInstance): void {
  let draining = false;
  app.addHook('preClose', async () => {
    draining = true;
  });
  // Callback hooks, not async ones: they run on every request, and a promise each is not free.
  app.addHook('onRequest', (_request, reply, done) => {
    if (!draining) return done();
    reply.header('connection', 'close');
    done(serviceUnavailable(messages.shuttingDown, 1));
  });
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (draining) reply.header('connection', 'close');
    done(null, payload);
  });
}
