import type { Text } from '../shared/messages.js';

export const customFieldMessages = {
  fieldNotFound: { pt: 'Campo personalizado não encontrado.', en: 'Custom field not found.' },
  keyTaken: (key: string) => ({
    pt: `Já existe um campo personalizado com a chave '${key}' neste recurso.`,
    en: `A custom field with the key '${key}' already exists on this resource.`,
  }),
  tooMany: (limit: number) => ({
    pt: `Um recurso pode ter no máximo ${limit} campos personalizados.`,
    en: `A resource may have at most ${limit} custom fields.`,
  }),
  stillRemoving: (key: string) => ({
    pt: `Os valores do campo '${key}', excluído há pouco, ainda estão sendo removidos. Tente novamente em instantes.`,
    en: `The values of the field '${key}', deleted a moment ago, are still being removed. Try again shortly.`,
  }),
} as const satisfies Record<string, Text | ((...args: never[]) => Text)>;

/** Phrases for one custom value or definition at fault, completed with the field's name by `fieldMessage`. */
export const customFieldPhrases = {
  notDefined: () => ({
    pt: 'não é um campo personalizado deste recurso (veja GET /fields)',
    en: 'is not a custom field of this resource (see GET /fields)',
  }),
  notDefinedNow: () => ({
    pt: 'não é (mais) um campo personalizado deste recurso, ou o seu tipo mudou (veja GET /fields)',
    en: 'is not (or no longer) a custom field of this resource, or its type changed (see GET /fields)',
  }),
  cannotClear: () => ({ pt: 'é obrigatório e não pode ser apagado', en: 'is required and cannot be cleared' }),
  typeFixed: (type: string) => ({
    pt: `o tipo de um campo não muda (este é ${type})`,
    en: `the type of a field cannot change (this one is ${type})`,
  }),
  optionsOnlyForChoices: () => ({
    pt: 'só se aplica aos tipos select e multiselect',
    en: 'applies only to the select and multiselect types',
  }),
  optionsNeeded: () => ({
    pt: 'é obrigatório para os tipos select e multiselect',
    en: 'is required for the select and multiselect types',
  }),
} satisfies Record<string, (...args: never[]) => Text>;
