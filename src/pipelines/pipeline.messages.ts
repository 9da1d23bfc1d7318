import type { Text } from '../shared/messages.js';

export const pipelineMessages = {
  pipelineNotFound: { pt: 'Pipeline não encontrado.', en: 'Pipeline not found.' },
  tooMany: (limit: number) => ({
    pt: `Uma conta pode ter no máximo ${limit} pipelines.`,
    en: `An account may have at most ${limit} pipelines.`,
  }),
  defaultNotDeleted: {
    pt: 'O pipeline padrão não pode ser excluído: torne outro o padrão antes.',
    en: 'The default pipeline cannot be deleted: make another one the default first.',
  },
  stagesHoldLeads: (count: number, stages: readonly string[]) => ({
    pt: `${count} lead(s) estão em etapas removidas (${stages.join(', ')}). Informe ?moveTo= para movê-los.`,
    en: `${count} lead(s) are in the stages removed (${stages.join(', ')}). Send ?moveTo= to move them.`,
  }),
  pipelineHoldsLeads: (count: number) => ({
    pt: `${count} lead(s) estão neste pipeline. Informe ?moveTo= para movê-los.`,
    en: `${count} lead(s) are in this pipeline. Send ?moveTo= to move them.`,
  }),
} as const satisfies Record<string, Text | ((...args: never[]) => Text)>;

/** Phrases for one field at fault, completed with the field's name by `fieldMessage`. */
export const pipelinePhrases = {
  notAPipeline: () => ({
    pt: 'não é um pipeline desta conta (veja GET /pipelines)',
    en: 'is not a pipeline of this account (see GET /pipelines)',
  }),
  stageOf: (keys: readonly string[]) => ({
    pt: `deve ser uma etapa do pipeline do lead: ${keys.join(', ')}`,
    en: `must be a stage of the lead's pipeline: ${keys.join(', ')}`,
  }),
  keysUnique: () => ({ pt: 'as chaves das etapas devem ser únicas', en: 'the stage keys must be unique' }),
  newKey: (pattern: string) => ({
    pt: `a chave de uma etapa nova deve seguir ${pattern}`,
    en: `a new stage's key must match ${pattern}`,
  }),
  keepDefault: () => ({
    pt: 'não desmarca o pipeline padrão: torne outro o padrão',
    en: 'cannot unset the default pipeline: make another one the default',
  }),
  notATarget: () => ({
    pt: 'deve nomear uma etapa que continua existindo: <chave> ou <id do pipeline>:<chave>',
    en: 'must name a stage that remains: <key> or <pipeline id>:<key>',
  }),
} satisfies Record<string, (...args: never[]) => Text>;
