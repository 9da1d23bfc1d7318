/**
 * Who calls, in one type and its views: the tenant and the token of an authenticated request, the
 * request that carries the call, and the token's scopes. The views below are the parts a layer
 * needs, never another notion of a caller.
 */
export interface Caller {
  readonly tenantId: string;
  readonly tokenId: string;
  readonly requestId: string;
  readonly scopes: ReadonlySet<string>;
}

/** The authenticated token, before any request is known (auth/token-authenticator.ts). */
export type Principal = Omit<Caller, 'requestId'>;

/** Who makes a change through the services, as its events record it (SPEC §14). */
export type Actor = Pick<Caller, 'tenantId' | 'tokenId'> & Partial<Pick<Caller, 'requestId'>>;

/** What an event records of its change: a change the server makes itself has no token or request. */
export type Change = Pick<Caller, 'tenantId'> & {
  readonly tokenId?: string | null | undefined;
  readonly requestId?: string | null | undefined;
};
