import type { Text } from '../shared/messages.js';

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
  scopeLacking: (scope: string): Text => ({
    pt: `O token não tem o escopo necessário: ${scope}.`,
    en: `The token lacks the required scope: ${scope}.`,
  }),
} as const satisfies Record<string, Text | ((...args: never[]) => Text)>;
