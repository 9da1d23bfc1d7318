import type { RouteOptions } from 'fastify';

type RouteHookName = 'onRequest' | 'preHandler' | 'onSend';
type OneHook<H> = H extends readonly (infer Each)[] ? Each : H;

/**
 * Appends a hook to one route. Route hooks run in the order they were added, so the scope's rate
 * limit (added first) answers before authentication touches the database. A hook that only some
 * routes need costs the others nothing this way.
 */
export function appendRouteHook<N extends RouteHookName>(
  route: RouteOptions,
  name: N,
  hook: OneHook<NonNullable<RouteOptions[N]>>,
): void {
  const existing = route[name] as unknown;
  const hooks = existing === undefined ? [] : Array.isArray(existing) ? existing : [existing];
  (route as Record<N, unknown>)[name] = [...hooks, hook];
}
