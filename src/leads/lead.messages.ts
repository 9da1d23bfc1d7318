import type { Text } from '../shared/messages.js';

export const leadMessages = {
  leadRequired: {
    pt: 'O nome é obrigatório e é necessário informar um e-mail ou telefone.',
    en: 'Name is required, and an e-mail or a phone is also needed.',
  },
  leadContactRequired: {
    pt: 'É necessário informar um e-mail ou telefone.',
    en: 'An e-mail or a phone is needed.',
  },
  convertNeedsEmail: {
    pt: 'Para converter o lead em cliente, ele precisa ter um e-mail.',
    en: 'A lead needs an e-mail to be converted into a customer.',
  },
  leadNotFound: { pt: 'Lead não encontrado.', en: 'Lead not found.' },
  leadExternalIdTaken: {
    pt: 'Já existe um lead com este externalId.',
    en: 'A lead with this externalId already exists.',
  },
} as const satisfies Record<string, Text>;
