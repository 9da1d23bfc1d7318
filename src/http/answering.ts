import type { FastifyInstance } from 'fastify';
import { whenClosed } from './response-closed.js';

/**
 * The requests this process is answering, so that background work (an import's steps, SPEC §23)
 * can start each step at a moment with none: a step shares both cores with whatever runs beside it
 * (its rows prepared here, written by a database backend), and a request that could have gone
 * before it would wait on it.
 */
export class Answering {
  #count = 0;
  readonly #waiters = new Set<() => void>();

  /** Counts every request of `app` from its first hook until its response closes (sent or abandoned). */
  install(app: FastifyInstance): void {
    app.addHook('onRequest', (_request, reply, done) => {
      this.#count++;
      whenClosed(reply.raw, () => this.#left());
      done();
    });
  }

  get count(): number {
    return this.#count;
  }

  /**
   * Resolves once no request is being answered, or after `maxMs` at the longest: a stream of
   * requests (or one long download) slows background work down, never stops it.
   */
  quiet(maxMs: number): Promise<void> {
    if (this.#count === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, maxMs);
      this.#waiters.add(done);
    });
  }

  #left(): void {
    this.#count--;
    if (this.#count > 0) return;
    for (const done of [...this.#waiters]) done();
  }
}
