import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyRequest, onSendAsyncHookHandler, preHandlerAsyncHookHandler } from 'fastify';
import type { Db } from '../db/database.js';
import { principalOf } from '../http/authenticate.js';
import { appendRouteHook } from '../http/route-hooks.js';
import { ApiError, validationFailed } from '../shared/errors.js';
import { fieldMessage, messages } from '../shared/messages.js';
import { IdempotencyRepository } from './idempotency.repository.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set when this request owns an Idempotency-Key: its answer is recorded for replays. */
    idempotencyClaim?: { tenantId: string; key: string };
  }
}

const HEADER = 'idempotency-key';
/** SPEC §7: 1–255 printable characters. */
const KEY_SHAPE = /^[\x20-\x7e]{1,255}$/;
/** Headers of the first answer that a replay repeats. */
const REPLAYED_HEADERS = ['etag', 'location'];
const PURGE_INTERVAL_MS = 60 * 60_000;

/**
 * SPEC §7 on every POST of the scope it is installed in: the same key and body within 24 hours
 * replay the first answer (with `Idempotent-Replayed: true`) and create nothing; another body is a
 * 422; a key whose first request is still running is a 409. The database decides who owns a key,
 * so this holds across instances.
 */
export function honourIdempotencyKeys(app: FastifyInstance, db: Db): void {
  const records = new IdempotencyRepository(db);

  const claimKey: preHandlerAsyncHookHandler = async (request, reply) => {
    const key = request.headers[HEADER];
    if (key === undefined) return;
    if (typeof key !== 'string' || !KEY_SHAPE.test(key)) {
      throw validationFailed([{ field: 'Idempotency-Key', message: fieldMessage('Idempotency-Key', keyRule) }]);
    }
    const { tenantId } = principalOf(request);
    const claim = await records.claim(tenantId, key, requestHash(request));
    switch (claim.kind) {
      case 'claimed':
        request.idempotencyClaim = { tenantId, key };
        return;
      case 'mismatch':
        throw new ApiError(422, 'idempotency_key_reused', messages.idempotencyKeyReused);
      case 'in-progress':
        throw new ApiError(409, 'conflict', messages.idempotencyInProgress, undefined, undefined, {
          'retry-after': '1',
        });
      case 'replay':
        return reply
          .code(claim.response.status)
          .headers(claim.response.headers)
          .header('idempotent-replayed', 'true')
          .type('application/json; charset=utf-8')
          .send(claim.response.body);
    }
  };

  const recordAnswer: onSendAsyncHookHandler = async (request, reply, payload) => {
    const claim = request.idempotencyClaim;
    if (!claim) return payload;
    request.idempotencyClaim = undefined;
    try {
      // A refused body (400) or a server failure (5xx) did nothing: the key stays free for a corrected retry.
      if (reply.statusCode === 400 || reply.statusCode >= 500) {
        await records.release(claim.tenantId, claim.key);
      } else {
        const headers: Record<string, string> = {};
        for (const name of REPLAYED_HEADERS) {
          const value = reply.getHeader(name);
          if (value !== undefined) headers[name] = String(value);
        }
        await records.complete(claim.tenantId, claim.key, { status: reply.statusCode, headers, body: String(payload) });
      }
    } catch (error) {
      // The answer itself is right; only its record failed. A retry will wait out the claim, then run again.
      request.log.error({ err: error }, 'could not record the idempotent answer');
    }
    return payload;
  };

  // On the POST routes only: the other routes pay nothing for it.
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (!methods.includes('POST')) return;
    appendRouteHook(route, 'preHandler', claimKey);
    appendRouteHook(route, 'onSend', recordAnswer);
  });

  const purge = setInterval(() => {
    records.purgeExpired().catch((error) => app.log.warn({ err: error }, 'idempotency purge failed'));
  }, PURGE_INTERVAL_MS);
  purge.unref();
  app.addHook('onClose', async () => clearInterval(purge));
}

const keyRule = {
  pt: 'deve ter de 1 a 255 caracteres ASCII imprimíveis',
  en: 'must be 1 to 255 printable ASCII characters',
};

/** What makes two requests "the same": method, path with query, and the validated body. */
function requestHash(request: FastifyRequest): string {
  return createHash('sha256')
    .update(`${request.method} ${request.url}\n`)
    .update(JSON.stringify(request.body ?? null))
    .digest('hex');
}
