import type { Text } from '../shared/messages.js';

export const importMessages = {
  importNotFound: { pt: 'Importação não encontrada.', en: 'Import not found.' },
  fileTooLarge: (mib: number) => ({
    pt: `O arquivo passa de ${mib} MiB.`,
    en: `The file is larger than ${mib} MiB.`,
  }),
  tooManyRows: (rows: number) => ({
    pt: `O arquivo passa de ${rows} linhas.`,
    en: `The file has more than ${rows} rows.`,
  }),
  emptyFile: { pt: 'O arquivo não tem linha de cabeçalho.', en: 'The file has no header row.' },
  /**
   * A file csv-parse cannot read: where (data row `row`, counted from 1 after the header; 0 the
   * header itself; undefined when not known) and why.
   */
  malformedCsv: (row: number | undefined, reason: Text) =>
    row === undefined
      ? { pt: `CSV malformado: ${reason.pt}.`, en: `Malformed CSV: ${reason.en}.` }
      : row === 0
        ? {
            pt: `CSV malformado na linha de cabeçalho: ${reason.pt}.`,
            en: `Malformed CSV in the header row: ${reason.en}.`,
          }
        : {
            pt: `CSV malformado na linha de dados ${row}: ${reason.pt}.`,
            en: `Malformed CSV at data row ${row}: ${reason.en}.`,
          },
  // Why csv-parse could not read a CSV file (its own error messages are English only).
  csvQuoteInUnquotedCell: {
    pt: 'uma célula que não começa com aspas tem aspas (") no meio; ponha a célula entre aspas e escreva cada aspa dela em dobro ("")',
    en: 'a cell that does not begin with a quote has a quote (") inside it; put the cell in quotes and write each of its quotes twice ("")',
  },
  csvTextAfterClosingQuote: {
    pt: 'uma célula entre aspas tem texto depois da aspa que a fecha; escreva cada aspa de dentro da célula em dobro ("")',
    en: 'a quoted cell has text after its closing quote; write each quote inside the cell twice ("")',
  },
  csvQuoteNotClosed: {
    pt: 'uma aspa (") aberta nunca é fechada e segue até o fim do arquivo',
    en: 'a quote (") opened there is never closed and runs to the end of the file',
  },
  csvRowTooLong: (mib: number) => ({
    pt: `a linha passa de ${mib} MiB (uma aspa aberta e nunca fechada faz do resto do arquivo uma só linha)`,
    en: `the row is longer than ${mib} MiB (a quote opened and never closed makes the rest of the file one row)`,
  }),
  csvOther: {
    pt: 'o arquivo não segue o formato CSV da RFC 4180',
    en: 'the file does not follow the CSV format of RFC 4180',
  },
  unknownColumn: (column: string) => ({
    pt: `A coluna "${column}" do cabeçalho não é um campo que a importação aceite.`,
    en: `The header column "${column}" is not a field an import takes.`,
  }),
  repeatedColumn: (column: string) => ({
    pt: `A coluna "${column}" aparece mais de uma vez no cabeçalho.`,
    en: `The header column "${column}" appears more than once.`,
  }),
  upsertColumnMissing: (column: string) => ({
    pt: `Com upsert=${column}, o cabeçalho precisa da coluna "${column}".`,
    en: `With upsert=${column}, the header needs the column "${column}".`,
  }),
  rowTooLong: (row: number) => ({
    pt: `A linha de dados ${row} passa de 1 MiB.`,
    en: `Data row ${row} is longer than 1 MiB.`,
  }),
  cellCount: (cells: number, columns: number) => ({
    pt: `A linha tem ${cells} células; o cabeçalho tem ${columns} colunas.`,
    en: `The row has ${cells} cells; the header has ${columns} columns.`,
  }),
  notJson: { pt: 'A linha não é um JSON válido.', en: 'The line is not valid JSON.' },
  notAnObject: { pt: 'A linha não é um objeto JSON.', en: 'The line is not a JSON object.' },
  nestedTooDeep: (levels: number) => ({
    pt: `A linha tem mais de ${levels} níveis de objetos e listas aninhados.`,
    en: `The line nests objects and arrays more than ${levels} levels deep.`,
  }),
  invalidUnicode: {
    pt: 'A linha contém texto Unicode inválido (surrogate isolado).',
    en: 'The line contains invalid Unicode text (a lone surrogate).',
  },
  forbiddenKey: {
    pt: 'A linha contém uma chave proibida (__proto__ ou constructor.prototype).',
    en: 'The line contains a forbidden key (__proto__ or constructor.prototype).',
  },
  erased: {
    pt: 'Linha removida a pedido do titular dos dados (LGPD) antes de ser importada.',
    en: "Row removed at its person's request (LGPD/GDPR) before it was imported.",
  },
  notCancellable: (status: string) => ({
    pt: `A importação já terminou (${status}) e não pode ser cancelada.`,
    en: `The import has already ended (${status}) and cannot be cancelled.`,
  }),
  notRevertible: (status: string) => ({
    pt: `Só uma importação terminada pode ser revertida (esta está ${status}).`,
    en: `Only an import that has ended can be reverted (this one is ${status}).`,
  }),
  dryRunNotRevertible: {
    pt: 'Uma simulação (dryRun) não gravou nada e não tem o que reverter.',
    en: 'A dry run wrote nothing and has nothing to revert.',
  },
  alreadyReverted: { pt: 'Esta importação já foi revertida.', en: 'This import has already been reverted.' },
  changedSince: {
    pt: 'O registro mudou depois da importação: mantido como está.',
    en: 'The record changed after the import: left as it is.',
  },
  deletedSince: {
    pt: 'O registro foi excluído depois da importação.',
    en: 'The record was deleted after the import.',
  },
  scopes: (scopes: string) => ({
    pt: `Esta importação requer os escopos ${scopes}.`,
    en: `This import needs the scopes ${scopes}.`,
  }),
} as const satisfies Record<string, Text | ((...args: never[]) => Text)>;
