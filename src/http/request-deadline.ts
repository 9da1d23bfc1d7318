import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { InFlight } from './in-flight.js';

/** Rendered by the error handler as 503 `service_unavailable`, with a log line. */
export class RequestDeadlineError extends Error {
  readonly code = 'FUNIL_REQUEST_DEADLINE';

  constructor(timeoutMs: number) {
    super(`no answer within ${timeoutMs} ms`);
    this.name = 'RequestDeadlineError';
  }
}

interface Clock {
  readonly reply: FastifyReply;
  /** Time already spent on the request, not counting the upload of its body. */
  spentMs: number;
  /** When the clock last started; undefined while the body arrives. */
  runningSince: number | undefined;
  /** Where it is in the requests in flight; -1 once out. */
  slot: number;
}

/** Where a request keeps its clock: on the request, not in a WeakMap (see tenant-share.ts's HOLD). */
const CLOCK = Symbol('funil.requestClock');

declare module 'fastify' {
  interface FastifyRequest {
    [CLOCK]: Clock | null;
  }
}

/** How often in-flight requests are checked: a deadline is met within this much. */
const MAX_SWEEP_INTERVAL_MS = 100;

/**
 * SPEC §2: an answer within 5 s, never a hang, even when a query never comes back (a database
 * host that stopped answering without closing its connections). The clock stops while the body
 * arrives, which goes at the client's pace and has a limit of its own (the server's
 * requestTimeout). Once the 503 is sent, Fastify runs none of the request's remaining hooks nor
 * its handler; only a step already under way finishes on its own.
 *
 * One sweep over the requests in flight instead of a timer and a listener per request: that is
 * on the path of every request, and the deadline needs no finer grain than the sweep's.
 *
 * Not Fastify's `handlerTimeout`: that one is disarmed as soon as a request body has been read,
 * that is on every write (fastify/fastify#6725).
 */
export function limitRequestTime(app: FastifyInstance, timeoutMs: number): void {
  app.decorateRequest(CLOCK, null);
  const inFlight = new InFlight<Clock>();

  const sweep = setInterval(
    () => {
      const now = performance.now();
      inFlight.forEach((clock) => {
        const { raw } = clock.reply;
        if (raw.writableEnded || raw.destroyed) {
          inFlight.remove(clock);
        } else if (clock.runningSince !== undefined && clock.spentMs + now - clock.runningSince >= timeoutMs) {
          inFlight.remove(clock);
          if (!clock.reply.sent && !raw.headersSent) clock.reply.send(new RequestDeadlineError(timeoutMs));
        }
      });
    },
    Math.min(MAX_SWEEP_INTERVAL_MS, Math.max(1, Math.floor(timeoutMs / 20))),
  );
  sweep.unref();
  app.addHook('onClose', (_instance, done) => {
    clearInterval(sweep);
    done();
  });

  app.addHook('onRequest', (request, reply, done) => {
    const clock: Clock = { reply, spentMs: 0, runningSince: performance.now(), slot: -1 };
    request[CLOCK] = clock;
    inFlight.add(clock);
    done();
  });
  app.addHook('preParsing', (request, _reply, payload, done) => {
    const clock = request[CLOCK];
    if (clock?.runningSince !== undefined) {
      clock.spentMs += performance.now() - clock.runningSince;
      clock.runningSince = undefined;
    }
    done(null, payload);
  });
  app.addHook('preValidation', (request, _reply, done) => {
    const clock = request[CLOCK];
    if (clock) clock.runningSince = performance.now();
    done();
  });
  app.addHook('onResponse', (request, _reply, done) => {
    const clock = request[CLOCK];
    if (clock) inFlight.remove(clock);
    done();
  });
}

/**
 * Runs `work` (reading an upload as it arrives: an import's file, SPEC §23) with the request's
 * clock stopped, as it is while any body arrives: it goes at the client's pace.
 */
export async function whileUploading<T>(request: FastifyRequest, work: () => Promise<T>): Promise<T> {
  const clock = request[CLOCK];
  if (clock?.runningSince !== undefined) {
    clock.spentMs += performance.now() - clock.runningSince;
    clock.runningSince = undefined;
  }
  try {
    return await work();
  } finally {
    if (clock) clock.runningSince = performance.now();
  }
}
