import type { Text } from '../shared/messages.js';

export const webhookMessages = {
  webhookNotFound: { pt: 'Webhook não encontrado.', en: 'Webhook not found.' },
  deliveryNotFound: { pt: 'Entrega não encontrada.', en: 'Delivery not found.' },
  lookupUnavailable: {
    pt: 'Não foi possível consultar o DNS do endereço agora. Tente novamente em instantes.',
    en: "The URL's host name could not be looked up just now. Try again shortly.",
  },
  nothingToRead: {
    pt: 'Um webhook só recebe eventos que o token que o cria pode ler: o token precisa de leads:read ou customers:read.',
    en: 'A webhook receives only events its creating token can read: the token needs leads:read or customers:read.',
  },
  typeNotAllowed: (type: string, scope: string) => ({
    pt: `Para receber eventos ${type}, o token que cria o webhook precisa do escopo ${scope}.`,
    en: `Receiving ${type} events needs the creating token to hold the scope ${scope}.`,
  }),
  tooMany: (limit: number) => ({
    pt: `Um tenant pode ter no máximo ${limit} webhooks.`,
    en: `A tenant may have at most ${limit} webhooks.`,
  }),
  attemptUnderWay: {
    pt: 'Uma tentativa desta entrega está em andamento. Tente novamente em instantes.',
    en: 'An attempt of this delivery is under way. Try again shortly.',
  },
  badTarget: (reason: Text) => ({ pt: `URL recusada: ${reason.pt}.`, en: `URL refused: ${reason.en}.` }),
} as const satisfies Record<string, Text | ((...args: never[]) => Text)>;
