import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  onSendAsyncHookHandler,
  preHandlerAsyncHookHandler,
} from 'fastify';
import { Type } from 'typebox';
import { principalOf } from '../http/authenticate.js';
import { whileUploading } from '../http/request-deadline.js';
import { appendRouteHook, type RouteHandler, wrapRouteHandler } from '../http/route-hooks.js';
import { withinLimit } from '../imports/import-reader.js';
import { validationFailed } from '../shared/errors.js';
import { fieldMessage, messages } from '../shared/messages.js';
import {
  type IdempotencyRepository,
  type KeyOwner,
  requestFingerprint,
  type StoredResponse,
} from './idempotency.repository.js';
import { spendsKey, verdictOf } from './idempotency-rules.js';

/** A key this request owns: its answer is recorded for replays. */
interface Claim extends KeyOwner {
  /** The route's handler is running (it may outlive the answer: see `recordAnswer`). */
  handlerRunning: boolean;
  /** The answer went out as a 5xx while the handler ran: its real outcome is recorded when it ends. */
  outcomePending: boolean;
  /** The request's body is an upload, hashed as its handler reads it. */
  upload?: Upload;
}

/**
 * An upload read as a stream (an import's file, SPEC §23): its key is bound to its route, its
 * media type and its bytes, which are known only once read.
 */
interface Upload {
  readonly route: string;
  readonly media: string | null;
  /** The SHA-256 of its bytes, once they have been read to their end. */
  sha256?: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    idempotencyClaim?: Claim;
  }
  interface FastifyContextConfig {
    /**
     * How a route's answer is kept for replays, when it must not be stored as sent (an answer
     * holding a secret that is kept only encrypted): `store` before it is written, `replay` after it is read.
     */
    idempotentAnswer?: AnswerKeeping;
    /** A POST route whose calls carry their own keys (MCP's `idempotencyKey`): the header is not read. */
    ownIdempotency?: boolean;
  }
}

export interface AnswerKeeping {
  store(body: string): Promise<string>;
  replay(body: string): Promise<string>;
}

const HEADER = 'idempotency-key';
/** SPEC §7: 1–255 printable characters. */
const KEY_SHAPE = /^[\x20-\x7e]{1,255}$/;

/** SPEC §7's key as a value in a body (an MCP write's `idempotencyKey`). */
export const IdempotencyKey = Type.String({
  minLength: 1,
  maxLength: 255,
  pattern: KEY_SHAPE.source,
  description:
    'Optional: any unique text (a UUID) naming this write. Repeating the call with the same key and arguments ' +
    'within 24 hours answers the first result again and changes nothing: safe retries.',
});
/** Headers of the first answer that a replay repeats. */
const REPLAYED_HEADERS = ['etag', 'location', 'funil-upsert'];

/**
 * SPEC §7 on every POST of the scope it is installed in: the same token, key, route and body within
 * 24 hours replay the first answer (with `Idempotent-Replayed: true`) and create nothing; another
 * route or body is a 422; a key whose first request is still running is a 409. The database
 * decides who owns a key, so this holds across instances.
 *
 * A key stays "running" for as long as its handler runs, even past a 503 sent by the request
 * deadline: the write may still commit, and a retry must then replay it, not make a second one.
 *
 * An upload's key is claimed before its bytes are read: its handler reads them through a hash, and
 * its answer is recorded with their fingerprint. A retry whose key's answer is recorded reads its
 * own bytes (within the import's limit), and is answered the replay only when they are the same.
 */
export function honourIdempotencyKeys(app: FastifyInstance, records: IdempotencyRepository): void {
  // Bookkeeping, so on the database's own handle, outside the request's budget (idempotency.repository.ts).
  const release = (request: FastifyRequest, owner: KeyOwner) =>
    records.release(owner).catch((error) => request.log.error({ err: error }, 'could not release an idempotency key'));

  const claimKey: preHandlerAsyncHookHandler = async (request, reply) => {
    const key = request.headers[HEADER];
    if (key === undefined) return;
    if (typeof key !== 'string' || !KEY_SHAPE.test(key)) {
      throw validationFailed([{ field: 'Idempotency-Key', message: fieldMessage('Idempotency-Key', keyRule) }]);
    }
    const { tenantId, tokenId } = principalOf(request);
    const owner = { tenantId, tokenId, key };
    const route = `${request.method} ${request.url}`;
    const { body } = request;
    const upload: Upload | undefined =
      body instanceof Readable ? { route, media: request.headers['content-type'] ?? null } : undefined;
    const claim =
      upload && body instanceof Readable
        ? await records.claim(request.db, owner, uploadHead(upload), {
            fingerprint: () => whileUploading(request, async () => uploadFingerprint(upload, await digestOf(body))),
          })
        : await records.claim(request.db, owner, requestFingerprint(route, body));
    const verdict = verdictOf(claim, {
      reused: messages.idempotencyKeyReused,
      inProgress: messages.idempotencyInProgress,
    });
    switch (verdict.kind) {
      case 'run':
        // Answered already (the deadline, while the claim was made): the handler will not run.
        if (reply.sent) return void (await release(request, owner));
        request.idempotencyClaim = { ...owner, handlerRunning: false, outcomePending: false, upload };
        if (upload && body instanceof Readable) request.body = hashedAsRead(body, upload);
        return;
      case 'refuse':
        throw verdict.error;
      case 'replay': {
        const keeping = request.routeOptions.config.idempotentAnswer;
        const body = keeping ? await keeping.replay(verdict.response.body) : verdict.response.body;
        return reply
          .code(verdict.response.status)
          .headers(verdict.response.headers)
          .header('idempotent-replayed', 'true')
          .type('application/json; charset=utf-8')
          .send(body);
      }
    }
  };

  const recordAnswer: onSendAsyncHookHandler = async (request, reply, payload) => {
    const claim = request.idempotencyClaim;
    if (!claim || claim.outcomePending) return payload;
    if (reply.statusCode >= 500 && claim.handlerRunning) {
      // The deadline's 503 while the handler still runs: its outcome is not known yet.
      claim.outcomePending = true;
      return payload;
    }
    request.idempotencyClaim = undefined;
    if (spendsKey(reply.statusCode)) await complete(request, claim, answerOf(reply, String(payload)));
    else await release(request, claim);
    return payload;
  };

  const complete = async (request: FastifyRequest, claim: Claim, response: StoredResponse) => {
    const { upload } = claim;
    // Refused before its bytes were all read (a file past the limit, another media type): the
    // refusal wrote nothing and names no bytes, so, as after a 400, a retry runs again.
    if (upload && upload.sha256 === undefined && response.status >= 400) return release(request, claim);
    try {
      const keeping = request.routeOptions.config.idempotentAnswer;
      const body = keeping ? await keeping.store(response.body) : response.body;
      // An upload answered before its end (no route does): no retry's bytes match it, so none is replayed it.
      const requestHash = upload && uploadFingerprint(upload, upload.sha256 ?? null);
      await records.complete(claim, { ...response, body }, requestHash);
    } catch (error) {
      // The answer itself is right; only its record failed. A retry will wait out the claim, then run again.
      request.log.error({ err: error }, 'could not record the idempotent answer');
    }
  };

  /** Records the outcome of a handler that ended after its answer had gone out. */
  const settleLate = async (request: FastifyRequest, reply: FastifyReply, claim: Claim, outcome: Outcome) => {
    request.idempotencyClaim = undefined;
    // It failed, so it wrote nothing: a write is one transaction.
    if (!outcome.ok) return release(request, claim);
    if (outcome.payload === reply) {
      request.log.error('a POST handler sent its answer itself, so its outcome cannot be recorded: handlers return it');
      return release(request, claim);
    }
    request.log.warn({ status: reply.statusCode }, 'a request answered 503 by its deadline completed afterwards');
    return complete(request, claim, answerOf(reply, String(reply.serialize(outcome.payload))));
  };

  const trackHandler = (handler: RouteHandler): RouteHandler =>
    async function (this: FastifyInstance, request, reply) {
      const claim = request.idempotencyClaim;
      if (!claim) return handler.call(this, request, reply);
      claim.handlerRunning = true;
      let outcome: Outcome = { ok: false };
      try {
        const payload = await handler.call(this, request, reply);
        outcome = { ok: true, payload };
        return payload;
      } finally {
        claim.handlerRunning = false;
        if (claim.outcomePending) await settleLate(request, reply, claim, outcome);
      }
    };

  // On the POST routes only: the other routes pay nothing for it.
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (!methods.includes('POST') || route.config?.ownIdempotency) return;
    appendRouteHook(route, 'preHandler', claimKey);
    appendRouteHook(route, 'onSend', recordAnswer);
    wrapRouteHandler(route, trackHandler);
  });
}

type Outcome = { ok: true; payload: unknown } | { ok: false };

function answerOf(reply: FastifyReply, body: string): StoredResponse {
  const headers: Record<string, string> = {};
  for (const name of REPLAYED_HEADERS) {
    const value = reply.getHeader(name);
    if (value !== undefined) headers[name] = String(value);
  }
  return { status: reply.statusCode, headers, body };
}

const keyRule = {
  pt: 'deve ter de 1 a 255 caracteres ASCII imprimíveis',
  en: 'must be 1 to 255 printable ASCII characters',
};

/** What an upload's key is bound to before its bytes are read: the record of a first request still running holds it. */
function uploadHead({ route, media }: Upload): string {
  return requestFingerprint(route, { upload: media });
}

/** What an upload's key is bound to: the record of a first request that ended holds it. */
function uploadFingerprint({ route, media }: Upload, sha256: string | null): string {
  return requestFingerprint(route, { upload: media, sha256 });
}

/** `body` as its reader reads it, hashed on the way: `upload.sha256` is set when it has been read to its end. */
function hashedAsRead(body: Readable, upload: Upload): Readable {
  const hash = createHash('sha256');
  // Lazy, as `body` is: nothing is read before the handler reads (an unread body is discarded by
  // Node as usual); an error of `body` is the reader's, and the reader's end ends the read of `body`.
  return Readable.from(
    (async function* () {
      for await (const chunk of body as AsyncIterable<Buffer>) {
        hash.update(chunk);
        yield chunk;
      }
      upload.sha256 = hash.digest('hex');
    })(),
    { objectMode: false },
  );
}

/**
 * The SHA-256 of a retried upload's bytes, read to their end only to be compared (a replay or a
 * refusal does not need them), within the import's limit (SPEC §23): past it, the 413 the import answers.
 */
async function digestOf(body: AsyncIterable<Buffer>): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of withinLimit(body)) hash.update(chunk);
  return hash.digest('hex');
}
