export const SCOPES = [
  'leads:read',
  'leads:write',
  'leads:create',
  'customers:read',
  'customers:write',
  'webhooks:read',
  'webhooks:write',
  'fields:write',
  'privacy:read',
  'privacy:write',
  'pipelines:write',
] as const;
export type Scope = (typeof SCOPES)[number];

/** A route any token of the tenant may call: every token holds at least one scope. */
export const ANY_TOKEN = { anyOf: SCOPES } as const;

/** Scopes of which any one would do. */
export interface AnyOf {
  readonly anyOf: readonly string[];
}

/** What a route needs: a scope, every scope of a list, or any one of a list (`{anyOf}`). */
export type ScopeRule = Scope | readonly Scope[] | { readonly anyOf: readonly Scope[] };

/**
 * What a token lacks for `rule`, for the words of a 403: the first scope of a list it does not
 * hold, or the scopes of an `anyOf` none of which it holds (any one would do); undefined when it has them.
 */
export function lackingScopes(rule: ScopeRule | undefined, held: ReadonlySet<string>): string | AnyOf | undefined {
  if (rule === undefined) return undefined;
  if (typeof rule === 'object' && 'anyOf' in rule) {
    return rule.anyOf.some((scope) => held.has(scope)) ? undefined : { anyOf: rule.anyOf };
  }
  return [rule].flat().find((scope) => !held.has(scope));
}
