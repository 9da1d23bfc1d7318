import type { Text } from '../shared/messages.js';
import type { AnyOf } from './scopes.js';

export const authMessages = {
  tokenMissing: {
    pt: 'Token de acesso ausente: envie o cabeçalho Authorization: Bearer <token>.',
    en: 'Access token missing: send the header Authorization: Bearer <token>.',
  },
  tokenInvalid: { pt: 'Token de acesso inválido.', en: 'Invalid access token.' },
  tokenExpired: { pt: 'Token de acesso expirado.', en: 'The access token has expired.' },
  tokenRevoked: { pt: 'Token de acesso revogado.', en: 'The access token has been revoked.' },
  tenantInactive: {
    pt: 'A conta associada a este token está inativa.',
    en: 'The account of this token is inactive.',
  },
  scopeLacking: (scope: string | AnyOf): Text => ({
    pt: `O token não tem o escopo necessário: ${typeof scope === 'string' ? scope : scope.anyOf.join(' ou ')}.`,
    en: `The token lacks the required scope: ${typeof scope === 'string' ? scope : scope.anyOf.join(' or ')}.`,
  }),
} as const satisfies Record<string, Text | ((...args: never[]) => Text)>;
