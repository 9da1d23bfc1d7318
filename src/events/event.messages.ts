import type { Text } from '../shared/messages.js';

export const eventMessages = {
  cursorExpired: {
    pt: 'Os eventos depois deste cursor já foram descartados pela retenção. Releia as listas e siga o feed a partir de agora.',
    en: 'Events after this cursor have been pruned by retention. Re-read the lists, then follow the feed from now on.',
  },
  scopeNeeded: {
    pt: 'O token não tem o escopo necessário: leads:read ou customers:read.',
    en: 'The token lacks the required scope: leads:read or customers:read.',
  },
  typeNotAllowed: (type: string, scope: string) => ({
    pt: `Para ler eventos ${type}, o token precisa do escopo ${scope}.`,
    en: `Reading ${type} events needs the scope ${scope}.`,
  }),
} as const satisfies Record<string, Text | ((...args: never[]) => Text)>;
