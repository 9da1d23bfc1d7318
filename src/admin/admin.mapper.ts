import type { TokenRow } from '../auth/token.repository.js';
import { toIso } from '../db/timestamp-text.js';
import type { IssuedToken } from './issue-token.js';
import type { TenantRow } from './tenant.repository.js';

export function toTenant(row: TenantRow) {
  return {
    id: row.id,
    name: row.name,
    active: row.active,
    phoneCountry: row.phoneCountry,
    createdAt: toIso(row.createdAt),
    updatedAt: toIso(row.updatedAt),
  };
}

function tokenFields(row: TokenRow) {
  return {
    id: row.id,
    name: row.name,
    scopes: row.scopes,
    tenant: row.tenantId,
    expiresAt: toIso(row.expiresAt),
    createdAt: toIso(row.createdAt),
  };
}

export function toCreatedToken(issued: IssuedToken) {
  return { ...tokenFields(issued), token: issued.token };
}

export function toTokenSummary(row: TokenRow) {
  return {
    ...tokenFields(row),
    prefix: row.prefix,
    lastUsedAt: toIso(row.lastUsedAt),
    revokedAt: toIso(row.revokedAt),
  };
}
