import type { TokenRepository, TokenRow } from '../auth/token.repository.js';
import { generateTokenSecret } from '../auth/token-secret.js';

export interface IssuedToken extends TokenRow {
  /** The plain token: returned once, never stored. */
  token: string;
}

export async function issueToken(
  tokens: TokenRepository,
  request: { tenantId: string; name: string; scopes: readonly string[]; expiresAt: Date | null },
): Promise<IssuedToken> {
  const secret = generateTokenSecret();
  const row = await tokens.create({
    tenantId: request.tenantId,
    name: request.name,
    scopes: [...request.scopes],
    expiresAt: request.expiresAt,
    tokenHash: secret.hash,
    prefix: secret.prefix,
  });
  return { ...row, token: secret.token };
}
