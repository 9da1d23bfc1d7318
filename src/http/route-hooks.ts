import type { onRequestHookHandler, RouteOptions } from 'fastify';

/**
 * Appends an onRequest hook to one route. Route hooks run in the order they were added, so the
 * scope's rate limit (added first) answers before authentication touches the database.
 */
export function appendOnRequest(route: RouteOptions, hook: onRequestHookHandler): void {
  const existing = route.onRequest;
  route.onRequest = existing === undefined ? [hook] : [...(Array.isArray(existing) ? existing : [existing]), hook];
}
