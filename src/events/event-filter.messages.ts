import type { Text } from '../shared/messages.js';

/** Phrases for the part of a filter at fault, completed with its path by `fieldMessage` (SPEC §22). */
export const filterMessages = {
  notJson: () => ({ pt: 'deve ser um objeto JSON (codificado na URL)', en: 'must be a JSON object (URL-encoded)' }),
  tooDeep: (levels: number) => ({
    pt: `aninha all/any/not em mais de ${levels} níveis`,
    en: `nests all/any/not more than ${levels} levels deep`,
  }),
  tooManyTests: (limit: number, found: number) => ({
    pt: `tem ${found} testes de campo; o máximo é ${limit}`,
    en: `holds ${found} field tests; at most ${limit} are allowed`,
  }),
  notAField: (kinds: readonly string[]) => ({
    pt: `não é um campo de ${kinds.join(' nem de ')}`,
    en: `is not a field of ${kinds.join(' or ')} objects`,
  }),
  wholeCustom: () => ({
    pt: 'teste um campo personalizado por vez: custom.<chave>',
    en: 'test one custom field at a time: custom.<key>',
  }),
} satisfies Record<string, (...args: never[]) => Text>;
