import type { FastifyInstance, FastifyRequest } from 'fastify';
import { bearerOf, hashToken, looksLikeToken } from './token-secret.js';

export interface PresentedToken {
  /** The bearer credential as sent; undefined without a `Bearer` Authorization header. */
  readonly token: string | undefined;
  /** SHA-256 of a well-formed token, the only form a token is looked up or counted by. */
  readonly hash: string | undefined;
}

/** Where a request keeps its token once read: on the request, not in a WeakMap (see http/tenant-share.ts's HOLD). */
const PRESENTED = Symbol('funil.presentedToken');

declare module 'fastify' {
  interface FastifyRequest {
    [PRESENTED]: PresentedToken | null;
  }
}

/** Gives the requests of `app`'s routes a place for their token from the start (Fastify's decorator: one shape for all). */
export function keepPresentedTokens(app: FastifyInstance): void {
  app.decorateRequest(PRESENTED, null);
}

/** The request's bearer token, hashed once however many hooks ask (the rate limit, then authentication). */
export function presentedToken(request: FastifyRequest): PresentedToken {
  let found = request[PRESENTED];
  if (found == null) {
    const token = bearerOf(request.headers.authorization);
    found = { token, hash: token !== undefined && looksLikeToken(token) ? hashToken(token) : undefined };
    request[PRESENTED] = found;
  }
  return found;
}
