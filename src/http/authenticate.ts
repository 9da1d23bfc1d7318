import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Actor, Caller, Principal } from '../auth/caller.js';
import { presentedToken } from '../auth/presented-token.js';
import type { Scope, ScopeRule } from '../auth/scopes.js';
import type { TokenAuthenticator } from '../auth/token-authenticator.js';
import { ApiError, unauthorized } from '../shared/errors.js';
import { appendRouteHook } from './route-hooks.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The scope a route of the external API needs (SPEC §5.2): one, each of a list, or `{anyOf}`. */
    scope?: ScopeRule;
    /**
     * What a request with `?upsert=` needs instead of `scope` (SPEC §5.6: it finds, and answers, an
     * existing record, so it needs the resource's read scope beside the write scope).
     */
    upsertScopes?: readonly Scope[];
    /**
     * What a request needs, when it depends on its query (SPEC §23: an import's resource); read off
     * the raw query, before validation. `scope` is then what the OpenAPI document shows.
     */
    scopeOf?: (query: Readonly<Record<string, unknown>>) => ScopeRule;
    /** Marks a route that needs no token at all. Only set on purpose. */
    public?: boolean;
    /**
     * A missing or unusable token is a 401 with `WWW-Authenticate: Bearer` (RFC 6750), as MCP
     * clients expect (SPEC §19), rather than the REST API's 403.
     */
    bearerChallenge?: boolean;
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
    const config = route.config as
      | {
          scope?: ScopeRule;
          upsertScopes?: readonly Scope[];
          scopeOf?: (query: Readonly<Record<string, unknown>>) => ScopeRule;
          public?: boolean;
          bearerChallenge?: boolean;
        }
      | undefined;
    if (!config?.scope && !config?.public) {
      throw new Error(`Route ${route.method} ${route.url} declares neither a scope nor public: true`);
    }
    const listed = Array.isArray(config.scope) ? config.scope : (config.scope as { anyOf?: unknown[] })?.anyOf;
    if (listed?.length === 0) throw new Error(`Route ${route.method} ${route.url} declares an empty list of scopes`);
    if (config.public) return;
    const {
      scope,
      upsertScopes,
      scopeOf: byQuery,
    } = config as {
      scope: ScopeRule;
      upsertScopes?: readonly Scope[];
      scopeOf?: (query: Readonly<Record<string, unknown>>) => ScopeRule;
    };
    // Read off the raw query, before validation: the scope is checked first (SPEC §2's order).
    const scopeOf = byQuery
      ? (request: FastifyRequest): ScopeRule => byQuery(request.query as Record<string, unknown>)
      : upsertScopes
        ? (request: FastifyRequest): ScopeRule =>
            (request.query as { upsert?: unknown }).upsert === undefined ? scope : upsertScopes
        : undefined;
    const challenge = config.bearerChallenge === true;
    appendRouteHook(route, 'onRequest', async (request) => {
      const presented = presentedToken(request);
      const principal = await authenticator
        .authenticate(presented, scopeOf ? scopeOf(request) : scope, request)
        .catch((error) => Promise.reject(challenge ? asChallenge(error, presented.token !== undefined) : error));
      request.principal = principal;
      request.tenantId = principal.tenantId;
      // Its queries now wait for a connection in its tenant's turn (db/connection-queue.ts).
      request.waitBudget.party = principal.tenantId;
    });
  });
}

/** A token refused (403) as a 401 that asks for a bearer token; `invalid_token` when one was sent. */
function asChallenge(error: unknown, tokenSent: boolean): unknown {
  if (!(error instanceof ApiError) || error.statusCode !== 403) return error;
  const challenge = tokenSent ? 'Bearer error="invalid_token"' : 'Bearer';
  return unauthorized(error.text, challenge);
}

/** The principal of an authenticated request; routes inside `requireBearerToken` always have one. */
export function principalOf(request: { principal?: Principal }): Principal {
  if (!request.principal) throw new Error('principalOf called outside an authenticated scope');
  return request.principal;
}

/** Who calls through this request: its token's tenant, id and scopes, and the request's id. */
export function callerOf(request: { principal?: Principal; id: string }): Caller {
  return { ...principalOf(request), requestId: request.id };
}

/** Who makes a change through this request, as its events record it (SPEC §14). */
export function actorOf(request: { principal?: Principal; id: string }): Required<Actor> {
  const { tenantId, tokenId } = principalOf(request);
  return { tenantId, tokenId, requestId: request.id };
}
