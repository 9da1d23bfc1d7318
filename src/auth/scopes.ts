export const SCOPES = ['leads:read', 'leads:write', 'customers:read', 'customers:write'] as const;
export type Scope = (typeof SCOPES)[number];
