import type { Compilable, CompiledQuery } from 'kysely';
import { compileRowMapper } from '../shared/row-mapper.js';
import { codeNameOf } from './column-names.js';
import type { Db } from './database.js';
import { executeAsNamed } from './keyset.js';
import { nameStatement } from './named-statements.js';

export interface PreparedOptions {
  /**
   * The database prepares it once per connection (false for a statement made for one run, which
   * would only fill the connection with plans).
   */
  readonly named?: boolean;
  /** Its rows keep the names the SQL gives them (a list page's, see rowsAsNamed), not the plugin's camelCase. */
  readonly keepColumnNames?: boolean;
}

/** Stands for a named value while a statement is compiled; each run puts the caller's value in its place. */
class Placeholder {
  constructor(readonly name: string) {}
}

/**
 * An object whose every property is the placeholder of that name, typed as the value it stands for;
 * `used` collects the names read from it.
 */
function placeholders<Params extends object>(used: Set<string>): Params {
  return new Proxy(
    {},
    {
      get: (_target, name) => {
        used.add(String(name));
        return new Placeholder(String(name));
      },
    },
  ) as Params;
}

/**
 * A statement Kysely builds and compiles once, then runs with new values each time, on whichever
 * handle the caller gives: the database, or a transaction open on it. On the hot paths, building
 * the query tree, renaming it to snake_case and compiling it cost more than the rest of the
 * request's own code (bench/results/profile-notes.md); the text never changes, only the values do.
 * Only for statements whose shape does not depend on their values (for those that do, see
 * PreparedByShape). A placeholder is an opaque object while the statement is built: it may go where
 * Kysely takes a value, nowhere else (not into `sql.lit`, `sql.ref`, a branch or an `in` list); a
 * placeholder that does not end up as a parameter of its own is refused here, at start. The
 * database, too, parses and plans it once per connection (named-statements.ts).
 */
export class PreparedQuery<Params extends object, Row> {
  readonly #compiled: CompiledQuery<Row>;
  /** Where each `$n` comes from: a named value of the run, or a constant of the statement. */
  readonly #bindings: readonly ({ name: keyof Params } | { constant: unknown })[];
  readonly #keepColumnNames: boolean;
  /** Its rows under camelCase names, compiled from the first row's columns: a statement's columns never change. */
  #renamed: ((row: Readonly<Record<string, unknown>>) => Row) | undefined;

  /** `build` compiles with the dialect and plugins of the handle it uses; each run takes a handle of its own. */
  constructor(
    build: (params: Params) => Compilable<Row>,
    { named = true, keepColumnNames = false }: PreparedOptions = {},
  ) {
    this.#keepColumnNames = keepColumnNames;
    const used = new Set<string>();
    this.#compiled = build(placeholders<Params>(used)).compile();
    this.#bindings = this.#compiled.parameters.map((value) =>
      value instanceof Placeholder ? { name: value.name as keyof Params } : { constant: value },
    );
    const bound = new Set(this.#bindings.flatMap((binding) => ('name' in binding ? [String(binding.name)] : [])));
    const lost = [...used].filter((name) => !bound.has(name));
    if (lost.length)
      throw new Error(`prepared statement: ${lost.join(', ')} did not become parameters: ${this.#compiled.sql}`);
    if (named) nameStatement(this.#compiled.sql);
  }

  /** Runs on `handle`: the database, or a transaction (it then commits or rolls back with it). */
  async execute(handle: Db, params: Params): Promise<Row[]> {
    const parameters = this.#bindings.map((binding) => ('name' in binding ? params[binding.name] : binding.constant));
    // Run past the camel-case plugin, whose renaming (key by key, each value checked for an object
    // to descend into) was 5 to 9 µs a row in W4's and W1's profiles; the compiled renaming does the
    // same in one object literal (bench/results/profile-notes.md).
    const { rows } = await executeAsNamed<Record<string, unknown>>(handle, { ...this.#compiled, parameters });
    const [first] = rows;
    if (this.#keepColumnNames || first === undefined) return rows as Row[];
    this.#renamed ??= compileRowMapper<Row>(
      Object.keys(first).map((column) => ({ key: codeNameOf(column), rowKey: column })),
    );
    return rows.map(this.#renamed);
  }

  async first(handle: Db, params: Params): Promise<Row | undefined> {
    return (await this.execute(handle, params))[0];
  }
}

/**
 * A family of statements whose text depends on a shape (which columns an update sets, whether it
 * has a condition): each shape is prepared the first time it is met. Shapes are few (subsets of a
 * resource's writable fields); past `maxShapes` a statement is still correct, only compiled each time.
 */
export class PreparedByShape<Shape, Params extends object, Row> {
  readonly #prepared = new Map<string, PreparedQuery<Params, Row>>();

  constructor(
    private readonly keyOf: (shape: Shape) => string,
    private readonly build: (shape: Shape, params: Params) => Compilable<Row>,
    private readonly options: { readonly maxShapes?: number; readonly keepColumnNames?: boolean } = {},
  ) {}

  for(shape: Shape): PreparedQuery<Params, Row> {
    const key = this.keyOf(shape);
    let statement = this.#prepared.get(key);
    if (statement === undefined) {
      const kept = this.#prepared.size < (this.options.maxShapes ?? 256);
      statement = new PreparedQuery((params: Params) => this.build(shape, params), {
        named: kept,
        keepColumnNames: this.options.keepColumnNames,
      });
      if (kept) this.#prepared.set(key, statement);
    }
    return statement;
  }
}
