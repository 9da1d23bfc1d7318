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
      const named = new pg.Query(text as string, rest[0] as unknown[], (error, result) =>
        error ? reject(error) : resolve(result),
      );
      (named as { name?: string }).name = name;
      query(named);
    });
  };
}
