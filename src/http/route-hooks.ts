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

export type RouteHandler = RouteOptions['handler'];

/**
 * Puts `wrap` around one route's handler: for what must know when the handler itself has settled,
 * which can be after the answer (the request deadline answers 503 while a query still runs).
 * Handlers return their payload rather than send it, so a wrapper sees the outcome too.
 */
export function wrapRouteHandler(route: RouteOptions, wrap: (handler: RouteHandler) => RouteHandler): void {
  route.handler = wrap(route.handler);
}
