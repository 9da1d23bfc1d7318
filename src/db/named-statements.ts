import { createHash } from 'node:crypto';
import pg from 'pg';

/**
 * Statement texts that run as named prepared statements: the database parses and plans each one
 * once per connection instead of at every run. On the write paths that is most of the database's
 * work (the outbox CTEs of SPEC §14 parse and plan into far more than they execute): measured with
 * pgbench on Funil's own statements, a lead create costs 0.21 ms of PostgreSQL CPU prepared against
 * 0.36 ms unnamed, a status change 0.29 ms against 0.73 ms.
 *
 * Only texts registered here are named, so the set of prepared statements a connection holds stays
 * as small as the set of hot statements (PreparedQuery registers its own); everything else runs as
 * an unnamed statement as before.
 */
const names = new Map<string, string>();

/** Marks `text` as one to prepare once per connection. */
export function nameStatement(text: string): void {
  if (!names.has(text)) names.set(text, `funil_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`);
}

const PATCHED = Symbol('funil.namedStatements');

/** A column of a row description, as node-postgres reads it. */
interface FieldDescription {
  readonly name: string;
  readonly dataTypeID: number;
  readonly format: string;
}

/** What node-postgres's Result derives from a row description (pg 8, lib/result.js `addFields`). */
interface DescribedResult {
  fields: readonly FieldDescription[];
  _parsers: readonly unknown[] | undefined;
  _prebuiltEmptyResultObject: object | null;
}

/** A named statement's rows as node-postgres reads them: its columns, their parsers, its empty row. */
interface RowShape {
  readonly fields: readonly FieldDescription[];
  readonly parsers: readonly unknown[];
  readonly emptyRow: object;
}

const shapes = new Map<string, RowShape>();

function sameColumns(a: readonly FieldDescription[], b: readonly FieldDescription[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const [x, y] = [a[i] as FieldDescription, b[i] as FieldDescription];
    if (x.name !== y.name || x.dataTypeID !== y.dataTypeID || x.format !== y.format) return false;
  }
  return true;
}

/**
 * A named statement, whose rows node-postgres reads as it read them last time: at every run it
 * looks up each column's parser and builds an empty row through a dictionary-mode object, 5 µs for
 * fifteen columns, 13 µs a request in W4's profile (brianc/node-postgres#3753 proposes the same
 * cache). Every client shares the same parsers, pg-types' own: Funil sets no parser of its own, nor
 * a client its types. A description that differs from the last one (a changed column) is read anew.
 */
class NamedQuery extends pg.Query {
  handleRowDescription(message: { fields: readonly FieldDescription[] }): void {
    const self = this as unknown as { name: string; _result: DescribedResult; _accumulateRows: boolean };
    const shape = shapes.get(self.name);
    if (shape !== undefined && sameColumns(shape.fields, message.fields)) {
      self._result.fields = message.fields;
      self._result._parsers = shape.parsers;
      self._result._prebuiltEmptyResultObject = shape.emptyRow;
      // Rows are kept for the callback, as pg's own handler decides when a callback is set.
      self._accumulateRows = true;
      return;
    }
    (pg.Query.prototype as unknown as { handleRowDescription(message: unknown): void }).handleRowDescription.call(
      this,
      message,
    );
    const { _parsers: parsers, _prebuiltEmptyResultObject: emptyRow } = self._result;
    if (parsers !== undefined && emptyRow !== null) {
      shapes.set(self.name, { fields: message.fields, parsers, emptyRow });
    }
  }
}

/**
 * Makes the client run registered texts as named statements. node-postgres keeps what a connection
 * has prepared and parses a name only once on it; a new connection (after an outage) prepares again.
 * Kysely sends `query(text, values)`; other forms (a cursor, a config object) pass through untouched.
 */
export function prepareNamedStatements(client: pg.PoolClient): void {
  const target = client as pg.PoolClient & { [PATCHED]?: true };
  if (target[PATCHED]) return;
  target[PATCHED] = true;
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as { query: unknown }).query = (text: unknown, ...rest: unknown[]) => {
    const name = typeof text === 'string' ? names.get(text) : undefined;
    if (name === undefined || !Array.isArray(rest[0]) || rest.length !== 1) return query(text, ...rest);
    // Made from the text, then named: given `{ name, text, values }`, node-postgres copies the object
    // through its property descriptors at every run (4 µs, where a text costs 0.2).
    return new Promise((resolve, reject) => {
      const named = new NamedQuery(text as string, rest[0] as unknown[], (error, result) =>
        error ? reject(error) : resolve(result),
      );
      (named as { name?: string }).name = name;
      query(named);
    });
  };
}
