import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { delimiterOf, openCsv, withinLimit } from '../../src/imports/import-reader.js';
import { ApiError } from '../../src/shared/errors.js';
import type { Text } from '../../src/shared/messages.js';

describe('reading an upload (SPEC §23)', () => {
  it('refuses a file past its limit with a 413, as it arrives', async () => {
    async function* file() {
      for (let i = 0; i < 10; i++) yield Buffer.alloc(1_000, 0x61);
    }
    const read: number[] = [];
    await assert.rejects(
      (async () => {
        for await (const chunk of withinLimit(file(), 5_500)) read.push(chunk.length);
      })(),
      (error: unknown) => error instanceof ApiError && error.statusCode === 413 && error.code === 'payload_too_large',
    );
    assert.equal(read.length, 5, 'nothing past the limit is passed on');
  });

  it('takes the separator the header has more of, outside quotes', () => {
    assert.equal(delimiterOf('name;email;phone'), ';');
    assert.equal(delimiterOf('name,email,phone'), ',');
    assert.equal(delimiterOf('"a,b,c";email'), ';');
    assert.equal(delimiterOf('name'), ',');
  });

  describe('a CSV file csv-parse cannot read is a 400 naming its data row, in each language', () => {
    /** The 400's text for `csv`, sent in chunks of `chunk` bytes (all at once by default). */
    async function refusal(csv: string, chunk = Number.POSITIVE_INFINITY): Promise<Text> {
      const bytes = Buffer.from(csv);
      async function* file() {
        for (let at = 0; at < bytes.length; at += chunk) yield bytes.subarray(at, at + chunk);
      }
      try {
        const read = await openCsv(file());
        for await (const _ of read.rows);
      } catch (error) {
        assert.ok(error instanceof ApiError, String(error));
        assert.equal(error.statusCode, 400);
        assert.equal(error.code, 'validation_failed');
        assert.deepEqual(error.details, [{ field: 'body', message: error.text }]);
        return error.text;
      }
      assert.fail('the file was read');
    }

    /** The words of csv-parse's own messages (and of the English texts), none of them Portuguese. */
    const PARSER_WORDS =
      /(?<!\p{L})(invalid|opening|closing|quote|quoted|not|closed|found|field|line|value|record|delimiter|instead|got|is|the|at|of|row|cell)(?!\p{L})/iu;
    /** Words that would say the English text is not English. */
    const PORTUGUESE_WORDS =
      /(?<!\p{L})(linha|dados|aspas?|célula|arquivo|malformado|cabeçalho|nunca|fechada|não|uma|segue|fim)(?!\p{L})/iu;

    function assertLanguages(text: Text): void {
      assert.doesNotMatch(text.pt, PARSER_WORDS, `pt: ${text.pt}`);
      assert.match(text.pt, /^CSV malformado /);
      assert.doesNotMatch(text.en, PORTUGUESE_WORDS, `en: ${text.en}`);
      assert.match(text.en, /^Malformed CSV /);
    }

    it('a quote inside an unquoted cell on data row 1 or 3', async () => {
      const first = await refusal('name,email\nC"x,c1@ex.com\nb,b@ex.com\n');
      assert.match(first.pt, /^CSV malformado na linha de dados 1: uma célula que não começa com aspas tem aspas/);
      assert.match(first.en, /^Malformed CSV at data row 1: a cell that does not begin with a quote has a quote/);
      assertLanguages(first);
      const third = await refusal('name,email\na,a@ex.com\nb,b@ex.com\nC"x,c1@ex.com\nd,d@ex.com\n');
      assert.match(third.pt, /^CSV malformado na linha de dados 3: /);
      assert.match(third.en, /^Malformed CSV at data row 3: /);
      assertLanguages(third);
    });

    it('counts rows, not lines: blank lines skipped, line breaks inside quotes, a file read in small chunks', async () => {
      const csv = `name,email\n\n"a\nb\nc",a@ex.com\n\nb,b@ex.com\nC"x,c1@ex.com\n${'d,d@ex.com\n'.repeat(200)}`;
      for (const chunk of [Number.POSITIVE_INFINITY, 7, 1]) {
        const text = await refusal(csv, chunk);
        assert.match(text.en, /^Malformed CSV at data row 3: /, `in chunks of ${chunk}`);
      }
    });

    it('a quoted cell with text after its closing quote', async () => {
      const text = await refusal('name,email\na,a@ex.com\n"C"x,c1@ex.com\n');
      assert.match(text.pt, /^CSV malformado na linha de dados 2: uma célula entre aspas tem texto depois/);
      assert.match(text.en, /^Malformed CSV at data row 2: a quoted cell has text after its closing quote/);
      assertLanguages(text);
    });

    it('a quote never closed: the row where it opened, running to the end of the file', async () => {
      const text = await refusal('name,email\na,a@ex.com\n"b,b@ex.com\nc,c@ex.com\nd,d@ex.com\n');
      assert.equal(
        text.pt,
        'CSV malformado na linha de dados 2: uma aspa (") aberta nunca é fechada e segue até o fim do arquivo.',
      );
      assert.equal(
        text.en,
        'Malformed CSV at data row 2: a quote (") opened there is never closed and runs to the end of the file.',
      );
      assertLanguages(text);
    });

    it('a quote never closed in a file past 1 MiB: the row where it opened, longer than 1 MiB', async () => {
      const text = await refusal(`name,email\na,a@ex.com\n"b,b@ex.com\n${'c,c@ex.com\n'.repeat(100_000)}`, 64 * 1024);
      assert.match(text.pt, /^CSV malformado na linha de dados 2: a linha passa de 1 MiB \(uma aspa aberta/);
      assert.match(text.en, /^Malformed CSV at data row 2: the row is longer than 1 MiB \(a quote opened/);
      assertLanguages(text);
    });

    it('a BOM and CRLF line ends count the same rows', async () => {
      const text = await refusal('\ufeffname,email\r\na,a@ex.com\r\nb,b@ex.com\r\nC"x,c1@ex.com\r\nd,d@ex.com\r\n');
      assert.match(text.pt, /^CSV malformado na linha de dados 3: /);
      assert.match(text.en, /^Malformed CSV at data row 3: /);
      assertLanguages(text);
      const unclosed = await refusal('\ufeffname,email\r\n"a,a@ex.com\r\nb,b@ex.com\r\n');
      assert.match(unclosed.en, /^Malformed CSV at data row 1: a quote/);
    });

    it('a `;`-separated file', async () => {
      const text = await refusal('name;email\na;a@ex.com\nb;"b;1"@ex.com\n');
      assert.match(text.pt, /^CSV malformado na linha de dados 2: uma célula entre aspas tem texto depois/);
      assertLanguages(text);
      const inner = await refusal('name;email\na;a@ex.com\nb;b@ex.com\nC"x;c1@ex.com\n');
      assert.match(inner.en, /^Malformed CSV at data row 3: a cell that does not begin with a quote/);
      assertLanguages(inner);
    });

    it('a fault in the header says so, in each language', async () => {
      const text = await refusal('na"me,email\na,a@ex.com\n');
      assert.match(text.pt, /^CSV malformado na linha de cabeçalho: /);
      assert.match(text.en, /^Malformed CSV in the header row: /);
      assertLanguages(text);
    });

    it('a well-formed file reads whole', async () => {
      const read = await openCsv(
        (async function* () {
          yield Buffer.from('\ufeffname;email\r\n"C""x";c1@ex.com\r\n\r\nb;"b\r\nc"\r\n');
        })(),
      );
      const rows: unknown[] = [];
      for await (const row of read.rows) rows.push(row);
      assert.equal(read.delimiter, ';');
      assert.deepEqual(read.columns, ['name', 'email']);
      assert.deepEqual(rows, [
        ['C"x', 'c1@ex.com'],
        ['b', 'b\r\nc'],
      ]);
    });
  });
});
