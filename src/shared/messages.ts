/** A message in each language the API speaks; `pt` (pt-BR) is the default (SPEC §2). */
export interface Text {
  readonly pt: string;
  readonly en: string;
}

export type Language = keyof Text;

export function languageOf(acceptLanguage: string | string[] | undefined): Language {
  const first = (Array.isArray(acceptLanguage) ? acceptLanguage[0] : acceptLanguage)?.trimStart() ?? '';
  return /^en\b/i.test(first) ? 'en' : 'pt';
}

export const messages = {
  invalidRequest: { pt: 'Requisição inválida.', en: 'Invalid request.' },
  malformedJson: { pt: 'O corpo da requisição não é um JSON válido.', en: 'The request body is not valid JSON.' },
  forbiddenJsonKey: {
    pt: 'O corpo da requisição contém uma chave proibida (__proto__ ou constructor.prototype).',
    en: 'The request body contains a forbidden key (__proto__ or constructor.prototype).',
  },
  nestedTooDeep: (levels: number): Text => ({
    pt: `O corpo da requisição tem mais de ${levels} níveis de objetos e listas aninhados.`,
    en: `The request body nests objects and arrays more than ${levels} levels deep.`,
  }),
  invalidUnicode: {
    pt: 'O corpo da requisição contém texto Unicode inválido (surrogate isolado).',
    en: 'The request body contains invalid Unicode text (a lone surrogate).',
  },
  emptyUpdate: {
    pt: 'Informe ao menos um campo para atualizar.',
    en: 'Send at least one field to update.',
  },
  routeNotFound: { pt: 'Rota não encontrada.', en: 'Route not found.' },
  idempotencyKeyReused: {
    pt: 'Esta Idempotency-Key já foi usada com outro corpo de requisição.',
    en: 'This Idempotency-Key was already used with a different request body.',
  },
  idempotencyInProgress: {
    pt: 'A primeira requisição com esta Idempotency-Key ainda está em andamento. Tente de novo em instantes.',
    en: 'The first request with this Idempotency-Key is still in progress. Retry shortly.',
  },
  preconditionFailed: {
    pt: 'O registro foi alterado desde a última leitura (If-Match não confere). Leia-o de novo e repita.',
    en: 'The record has changed since it was read (If-Match does not match). Read it again and retry.',
  },
  payloadTooLarge: {
    pt: 'O corpo da requisição excede o limite de 1 MiB.',
    en: 'The request body exceeds the 1 MiB limit.',
  },
  unsupportedMediaType: {
    pt: 'Envie o corpo como JSON (Content-Type: application/json).',
    en: 'Send the body as JSON (Content-Type: application/json).',
  },
  internalError: {
    pt: 'Erro interno inesperado. Informe o requestId ao suporte.',
    en: 'Unexpected internal error. Quote the requestId to support.',
  },
  serviceUnavailable: {
    pt: 'Serviço temporariamente indisponível. Tente novamente em instantes.',
    en: 'Service temporarily unavailable. Try again shortly.',
  },
  overloaded: {
    pt: 'O servidor está sobrecarregado. Tente novamente em instantes.',
    en: 'The server is overloaded. Try again shortly.',
  },
  shuttingDown: {
    pt: 'O servidor está sendo desligado. Tente novamente.',
    en: 'The server is shutting down. Try again.',
  },
  tenantLineFull: (seconds: number) => ({
    pt: `Há requisições demais desta conta esperando a vez. Tente novamente em ${seconds} s.`,
    en: `Too many of this account's requests are waiting their turn. Try again in ${seconds} s.`,
  }),
  rateLimited: (seconds: number) => ({
    pt: `Limite de requisições atingido. Tente novamente em ${seconds} s.`,
    en: `Rate limit reached. Try again in ${seconds} s.`,
  }),
} as const satisfies Record<string, Text | ((...args: never[]) => Text)>;

/** Phrases for one field at fault, completed with the field's name by `fieldMessage`. */
export const fieldMessages = {
  required: () => ({ pt: 'é obrigatório', en: 'is required' }),
  upsertKey: () => ({ pt: 'é obrigatório em um upsert por ele', en: 'is required to upsert by it' }),
  unknown: () => ({ pt: 'campo desconhecido', en: 'unknown field' }),
  empty: () => ({ pt: 'não pode ser vazio', en: 'must not be empty' }),
  type: (type: string) => ({ pt: `deve ser do tipo ${ptType(type)}`, en: `must be of type ${type}` }),
  maxLength: (limit: number) => ({
    pt: `deve ter no máximo ${limit} caracteres`,
    en: `must be at most ${limit} characters`,
  }),
  email: () => ({ pt: 'deve ser um e-mail válido', en: 'must be a valid e-mail address' }),
  dateTime: () => ({
    pt: 'deve ser uma data e hora ISO 8601 com fuso (ex.: 2026-11-21T10:00:00.000Z)',
    en: 'must be an ISO 8601 timestamp with a time zone (e.g. 2026-11-21T10:00:00.000Z)',
  }),
  date: () => ({ pt: 'deve ser uma data AAAA-MM-DD', en: 'must be a date YYYY-MM-DD' }),
  oneOf: (values: readonly unknown[]) => ({
    pt: `deve ser um de: ${values.join(', ')}`,
    en: `must be one of: ${values.join(', ')}`,
  }),
  after: (field: string) => ({ pt: `deve ser posterior a ${field}`, en: `must be after ${field}` }),
  periodDays: (limit: number) => ({
    pt: `o período pode abranger no máximo ${limit} dias`,
    en: `the period may span at most ${limit} days`,
  }),
  minimum: (limit: number) => ({ pt: `deve ser no mínimo ${limit}`, en: `must be at least ${limit}` }),
  maximum: (limit: number) => ({ pt: `deve ser no máximo ${limit}`, en: `must be at most ${limit}` }),
  decimals: () => ({ pt: 'deve ter no máximo 2 casas decimais', en: 'must have at most 2 decimal places' }),
  minItems: (limit: number) => ({
    pt: `deve ter ao menos ${limit} item(ns)`,
    en: `must have at least ${limit} item(s)`,
  }),
  maxItems: (limit: number) => ({
    pt: `deve ter no máximo ${limit} itens`,
    en: `must have at most ${limit} items`,
  }),
  uniqueItems: () => ({ pt: 'não pode ter itens repetidos', en: 'must not repeat items' }),
  invalid: () => ({ pt: 'valor inválido', en: 'invalid value' }),
  atLeastOneField: () => ({ pt: 'informe ao menos um campo', en: 'send at least one field' }),
  noNul: () => ({ pt: 'não pode conter o caractere NUL', en: 'must not contain the NUL character' }),
} satisfies Record<string, (...args: never[]) => Text>;

const PT_TYPES: Record<string, string> = {
  string: 'texto',
  integer: 'inteiro',
  number: 'número',
  boolean: 'booleano',
  object: 'objeto',
  array: 'lista',
  null: 'nulo',
};

function ptType(type: string): string {
  return type
    .split(',')
    .map((t) => PT_TYPES[t] ?? t)
    .join(' ou ');
}

/** "Campo 'email': deve ser um e-mail válido." */
export function fieldMessage(field: string, phrase: Text): Text {
  return { pt: `Campo '${field}': ${phrase.pt}.`, en: `Field '${field}': ${phrase.en}.` };
}
