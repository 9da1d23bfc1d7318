import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** Rendered by the error handler as 503 `service_unavailable`, with a log line. */
export class RequestDeadlineError extends Error {
  readonly code = 'FUNIL_REQUEST_DEADLINE';

  constructor(timeoutMs: number) {
    super(`no answer within ${timeoutMs} ms`);
    this.name = 'RequestDeadlineError';
  }
}

interface Clock {
  timer: NodeJS.Timeout | undefined;
  armedAt: number;
  /** Time already spent on the request, not counting the upload of its body. */
  spentMs: number;
}

/**
 * SPEC §2: an answer within 5 s, never a hang, even when a query never comes back (a database
 * host that stopped answering without closing its connections). The clock stops while the body
 * arrives, which goes at the client's pace and has a limit of its own (the server's
 * requestTimeout). Once the 503 is sent, Fastify runs none of the request's remaining hooks nor
 * its handler; only a step already under way finishes on its own.
 *
 * Not Fastify's `handlerTimeout`: that one is disarmed as soon as a request body has been read,
 * that is on every write (fastify/fastify#6725).
 */
export function limitRequestTime(app: FastifyInstance, timeoutMs: number): void {
  const clocks = new WeakMap<FastifyRequest, Clock>();

  const arm = (request: FastifyRequest, reply: FastifyReply, clock: Clock) => {
    clock.armedAt = performance.now();
    clock.timer = setTimeout(() => {
      if (reply.sent || reply.raw.headersSent) return;
      reply.send(new RequestDeadlineError(timeoutMs));
    }, timeoutMs - clock.spentMs);
    clock.timer.unref();
    clocks.set(request, clock);
  };
  const disarm = (clock: Clock | undefined) => {
    if (clock?.timer === undefined) return;
    clearTimeout(clock.timer);
    clock.timer = undefined;
    clock.spentMs += performance.now() - clock.armedAt;
  };

  app.addHook('onRequest', (request, reply, done) => {
    const clock: Clock = { timer: undefined, armedAt: 0, spentMs: 0 };
    arm(request, reply, clock);
    reply.raw.once('close', () => disarm(clock));
    done();
  });
  app.addHook('preParsing', (request, _reply, payload, done) => {
    disarm(clocks.get(request));
    done(null, payload);
  });
  app.addHook('preValidation', (request, reply, done) => {
    const clock = clocks.get(request);
    if (clock) arm(request, reply, clock);
    done();
  });
}
