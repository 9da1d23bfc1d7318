import type { FastifyInstance } from 'fastify';
import { presentedToken } from '../auth/presented-token.js';
import type { ScopeRule } from '../auth/scopes.js';
import type { Principal, TokenAuthenticator } from '../auth/token-authenticator.js';
import { appendRouteHook } from './route-hooks.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The scope a route of the external API needs (SPEC §5.2): one, each of a list, or `{anyOf}`. */
    scope?: ScopeRule;
    /** Marks a route that needs no token at all. Only set on purpose. */
    public?: boolean;
  }
  interface FastifyRequest {
    principal?: Principal;
  }
}

/**
 * Deny by default: every route registered in `app` (an encapsulated scope) must declare the
 * scope it needs or be explicitly public, else the app refuses to start.
 */
export function requireBearerToken(app: FastifyInstance, authenticator: TokenAuthenticator): void {
  app.addHook('onRoute', (route) => {
    const config = route.config as { scope?: ScopeRule; public?: boolean } | undefined;
    if (!config?.scope && !config?.public) {
      throw new Error(`Route ${route.method} ${route.url} declares neither a scope nor public: true`);
    }
    const listed = Array.isArray(config.scope) ? config.scope : (config.scope as { anyOf?: unknown[] })?.anyOf;
    if (listed?.length === 0) throw new Error(`Route ${route.method} ${route.url} declares an empty list of scopes`);
    if (config.public) return;
    const scope = config.scope;
    appendRouteHook(route, 'onRequest', async (request) => {
      const principal = await authenticator.authenticate(presentedToken(request), scope);
      request.principal = principal;
      request.tenantId = principal.tenantId;
    });
  });
}

/** The principal of an authenticated request; routes inside `requireBearerToken` always have one. */
export function principalOf(request: { principal?: Principal }): Principal {
  if (!request.principal) throw new Error('principalOf called outside an authenticated scope');
  return request.principal;
}

/** Who makes a change through this request, as its events record it (SPEC §14). */
export function actorOf(request: { principal?: Principal; id: string }): {
  tenantId: string;
  tokenId: string;
  requestId: string;
} {
  const { tenantId, tokenId } = principalOf(request);
  return { tenantId, tokenId, requestId: request.id };
}
