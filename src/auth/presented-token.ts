import type { FastifyRequest } from 'fastify';
import { bearerOf, hashToken, looksLikeToken } from '../auth/token-secret.js';

export interface PresentedToken {
  /** The bearer credential as sent; undefined without a `Bearer` Authorization header. */
  readonly token: string | undefined;
  /** SHA-256 of a well-formed token, the only form a token is looked up or counted by. */
  readonly hash: string | undefined;
}

const presented = new WeakMap<FastifyRequest, PresentedToken>();

/** The request's bearer token, hashed once however many hooks ask (the rate limit, then authentication). */
export function presentedToken(request: FastifyRequest): PresentedToken {
  let found = presented.get(request);
  if (found === undefined) {
    const token = bearerOf(request.headers.authorization);
    found = { token, hash: token !== undefined && looksLikeToken(token) ? hashToken(token) : undefined };
    presented.set(request, found);
  }
  return found;
}
