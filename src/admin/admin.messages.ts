import type { Text } from '../shared/messages.js';

export const adminMessages = {
  adminDisabled: {
    pt: 'A API de administração está desativada: defina FUNIL_ADMIN_TOKEN.',
    en: 'The admin API is disabled: set FUNIL_ADMIN_TOKEN.',
  },
  adminTokenInvalid: { pt: 'Token de administração inválido.', en: 'Invalid admin token.' },
  tenantNotFound: { pt: 'Conta não encontrada.', en: 'Tenant not found.' },
  tokenNotFound: { pt: 'Token não encontrado.', en: 'Token not found.' },
} as const satisfies Record<string, Text>;
