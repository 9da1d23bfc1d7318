import type { Text } from '../shared/messages.js';

export const customerMessages = {
  customerNotFound: { pt: 'Cliente não encontrado.', en: 'Customer not found.' },
  customerEmailTaken: {
    pt: 'Já existe um cliente com este e-mail.',
    en: 'A customer with this e-mail already exists.',
  },
  customerExternalIdTaken: {
    pt: 'Já existe um cliente com este externalId.',
    en: 'A customer with this externalId already exists.',
  },
} as const satisfies Record<string, Text>;
