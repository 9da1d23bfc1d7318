import type { Text } from '../shared/messages.js';

export const exportMessages = {
  exportNotFound: { pt: 'Exportação não encontrada.', en: 'Export not found.' },
  notReady: {
    pt: 'O arquivo ainda não está pronto: acompanhe GET /exports/{id} até o status succeeded.',
    en: 'The file is not ready yet: follow GET /exports/{id} until its status is succeeded.',
  },
  failed: { pt: 'A exportação falhou: não há arquivo.', en: 'The export failed: there is no file.' },
  expired: {
    pt: 'O arquivo desta exportação foi apagado (24 horas após feito, ou por um apagamento de dados pessoais).',
    en: 'The file of this export was deleted (24 hours after it was made, or by an erasure of personal data).',
  },
} as const satisfies Record<string, Text>;
