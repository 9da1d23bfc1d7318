import {
  type AliasableExpression,
  type Compilable,
  type Expression,
  type ExpressionBuilder,
  type InsertQueryBuilder,
  type InsertResult,
  type Kysely,
  type QueryCreator,
  type SelectQueryBuilder,
  type SqlBool,
  sql,
} from 'kysely';
import type { Change } from '../auth/caller.js';
import { sqlNameOf } from '../db/column-names.js';
import type { Db } from '../db/database.js';
import { type KeysetPage, keysetPage, rowsAsNamed, type SortKey } from '../db/keyset.js';
import { containsPattern } from '../db/like-pattern.js';
import { conditionalWrite, type ExpectedVersions, PreconditionFailedError, versionIn } from '../db/precondition.js';
import { PreparedByShape, PreparedQuery } from '../db/prepared-query.js';
import { SEARCH_SEPARATOR, searchText } from '../db/search-text.js';
import { type ChangeParams, changeEvents, EVENT_COLUMNS, type EventFamily } from '../events/change-events.js';
import { newId } from '../shared/ids.js';
import { type Condition, LargeTenants, type ListRows, scanWindowPage } from './scan-window.js';
import { SEARCH_WALK_THRESHOLD, searchPage } from './search-page.js';

/** A row as a read or a write returns it: its columns by (camelCase) name, the id and the version among them. */
export type StoredRow = Readonly<Record<string, unknown>> & { readonly id: string; readonly version: number };

/** How a list filter of the query string applies to a column. */
export interface FilterSpec {
  readonly column: string;
  readonly operator: '=' | '>=' | '<=' | 'in' | '@>' | 'is not distinct from';
  /** The value is an ISO 8601 text compared with a timestamp column. */
  readonly timestamp?: boolean;
  /** The value is compared as jsonb (`custom @> {"key": value}`). */
  readonly json?: boolean;
  /**
   * An index of its own finds its rows (an e-mail's handful; a custom value's, by GIN, however
   * many): no scan bound needed.
   */
  readonly narrow?: boolean;
  /**
   * The filter is a bound on this sort's own value (`updatedSince` on `sort=updatedAt`, SPEC §6's
   * sync walk): with that sort, its page is a range of the sort's index, every row of it a match.
   */
  readonly boundsSort?: SortKey<never>;
}

export interface RecordStoreOptions {
  readonly table: 'leads' | 'customers';
  /** The first word of its events' types (SPEC §14). */
  readonly events: EventFamily;
  /** The columns a read or a write returns. */
  readonly columns: readonly string[];
  /** What a list page selects (its rows keep the names these give them, see rowsAsNamed). */
  readonly listSelection: readonly unknown[];
  /** The columns an insert sets, `id` and `tenantId` among them, in the order the statement names them. */
  readonly insertColumns: readonly string[];
  /** SQL an update may compute from the row, by name (customers: the name rebuilt from its parts). */
  readonly derived?: Readonly<
    Record<
      string,
      (set: readonly string[], values: Readonly<Record<string, unknown>>) => Record<string, Expression<unknown>>
    >
  >;
  /** jsonb object columns an update merges into, key by key; a null value removes its key (`custom`, SPEC §16). */
  readonly merged?: readonly string[];
  /** The list filters, by their name in the query string. */
  readonly filters: Readonly<Record<string, FilterSpec>>;
  /** The columns `q` searches (SPEC §6: a case-insensitive substring). */
  readonly searchColumns: readonly string[];
  /** The most rows a filtered list page may read (LargeTenants, scanWindowPage); unset reads as many as it takes. */
  readonly scanRows?: number | undefined;
  /**
   * A column an update may require to hold one of given values (WriteOptions.within; leads: their
   * pipeline, SPEC §20), a null in it read as `orColumn`'s value.
   */
  readonly guard?: { readonly column: string; readonly orColumn: string };
}

export interface WriteOptions {
  /** The versions an If-Match allows (SPEC §8); undefined sets no condition. */
  readonly expected?: ExpectedVersions;
  /** Names of `derived` expressions the update also sets. */
  readonly derived?: readonly string[];
  /** The type of the update's event, when not `<family>.updated` or `.status_changed` (`lead.converted`). */
  readonly eventType?: string | null;
  /** The values the store's guard column must hold for the update to be made (else GuardRefusedError). */
  readonly within?: readonly string[] | undefined;
  /** Values the `derived` expressions read, beside the columns written. */
  readonly params?: Readonly<Record<string, unknown>> | undefined;
}

/** An update refused by the store's guard (WriteOptions.within): the record as it is. */
export class GuardRefusedError extends Error {
  constructor(readonly current: StoredRow) {
    super('the record is not where the write may apply');
  }
}

/** A resource's tables as this store sees them: its own names and columns, not Kysely's static types. */
type AnyTables = Record<string, Record<string, unknown>>;

interface Key {
  tenantId: string;
  id: string;
}

/**
 * A list page read straight off its sort's index: its sort, the filter that bounds the sort's value
 * (if any), whether it follows a cursor, how many rows it reads.
 */
interface PageShape {
  key: SortKey<unknown>;
  descending: boolean;
  bound: string | undefined;
  after: boolean;
  rows: number;
}

interface PageParams {
  tenantId: string;
  bound: unknown;
  afterValue: unknown;
  afterId: string | undefined;
}

/**
 * The most index-range page shapes a store prepares: a client's sorts, both ways, with and without
 * a cursor or a bound, at a few page sizes. One that walks every size gets the rest compiled at
 * each page. Each costs a PostgreSQL connection about 40 KB once planned (128 of them: 5.2 MB).
 */
const MAX_PAGE_SHAPES = 32;

interface UpdateShape {
  columns: readonly string[];
  derived: readonly string[];
  conditional: boolean;
  guarded: boolean;
}

type WriteParams = Key &
  ChangeParams &
  Record<string, unknown> & { versions?: readonly number[]; eventType?: string | null; within?: readonly string[] };

/**
 * A new record's times: when its statement began, not its transaction (`now()`), so that a create
 * that first waited inside a transaction (an upsert's lock) is not stamped before rows that
 * committed meanwhile (SPEC §6: a walker by updatedAt does not pass it by). One value for both.
 */
const STAMPS = { createdAt: sql`statement_timestamp()`, updatedAt: sql`statement_timestamp()` };

/** A change as the parameters of its statement. */
function changeParams(change: Change): { tenantId: string } & ChangeParams {
  return { tenantId: change.tenantId, tokenId: change.tokenId ?? null, requestId: change.requestId ?? null };
}

/**
 * The tenant-scoped storage of one resource (leads, customers): every statement takes the tenant
 * first, so a record of another tenant does not exist here. Each method runs on the handle it is
 * given (the database, or a transaction that spans several writes); the hot statements are
 * compiled once (PreparedQuery) and run on whichever handle comes.
 */
export class RecordStore {
  readonly #options: RecordStoreOptions;
  readonly #find: PreparedQuery<Key, StoredRow>;
  readonly #findForUpdate: PreparedQuery<Key, StoredRow>;
  readonly #insert: PreparedQuery<Key & ChangeParams & Record<string, unknown>, StoredRow>;
  readonly #insertMany: PreparedQuery<ChangeParams & { rows: string }, StoredRow>;
  /** The insert columns under their names in the table, as insertMany's rows carry them. */
  readonly #insertKeys: readonly string[];
  readonly #update: PreparedByShape<UpdateShape, WriteParams, StoredRow>;
  readonly #delete: PreparedByShape<boolean, WriteParams, { id: string }>;
  readonly #findIdBy: PreparedByShape<string, { tenantId: string; value: unknown }, { id: string }>;
  readonly #pages: PreparedByShape<PageShape, PageParams, Record<string, unknown>>;
  /** A number for each sort key met, for the pages' shape keys. */
  readonly #sortNumbers = new Map<SortKey<unknown>, number>();
  /** With a scan bound (the embedded database), the tenants larger than it; without, those that search in two steps. */
  readonly #largeTenants: LargeTenants;

  constructor(db: Db, options: RecordStoreOptions) {
    this.#options = options;
    this.#largeTenants = new LargeTenants(options.table, options.scanRows ?? SEARCH_WALK_THRESHOLD);
    // The table and columns are this store's own (a resource's), not Kysely's static types.
    const any = db as unknown as Kysely<AnyTables>;
    const { table, columns } = options;
    this.#find = new PreparedQuery((p: Key) =>
      returning<StoredRow>(
        any.selectFrom(table).select(columns).where('tenantId', '=', p.tenantId).where('id', '=', p.id),
      ),
    );
    this.#findForUpdate = new PreparedQuery((p: Key) =>
      returning<StoredRow>(
        any.selectFrom(table).select(columns).where('tenantId', '=', p.tenantId).where('id', '=', p.id).forUpdate(),
      ),
    );
    const family = options.events;
    /** The rows `insert` writes, each with its `<family>.created` event, in one statement (SPEC §14). */
    const created = (
      p: ChangeParams,
      insert: (db: QueryCreator<AnyTables>) => InsertQueryBuilder<AnyTables, string, InsertResult>,
    ) =>
      returning<StoredRow>(
        any
          .with('written', (db) => insert(db).returning(columns))
          .with('event', (db) =>
            db
              .insertInto('events')
              .columns(EVENT_COLUMNS)
              .expression(changeEvents.ofRows('written', `${family}.created`, p)),
          )
          .selectFrom('written')
          .selectAll(),
      );
    this.#insert = new PreparedQuery((p: Key & ChangeParams & Record<string, unknown>) =>
      created(p, (db) =>
        db
          .insertInto(table)
          .values({ ...Object.fromEntries(options.insertColumns.map((column) => [column, p[column]])), ...STAMPS }),
      ),
    );
    // The row is locked (and read as it was) before updatedAt is taken, so a write that waited for
    // another one gets a later time than it (SPEC §6: a walker by updatedAt does not pass it by).
    // A row that the values would not change is not written: no new version, no event (SPEC §14).
    this.#update = new PreparedByShape<UpdateShape, WriteParams, StoredRow>(
      (shape) => `${shape.columns.join(',')}|${shape.derived.join(',')}|${shape.conditional}|${shape.guarded}`,
      (shape, p) => {
        const set: Record<string, unknown> = Object.fromEntries(
          shape.columns.map((column) => [
            column,
            options.merged?.includes(column)
              ? sql`jsonb_strip_nulls(${sql.ref(`${table}.${column}`)} || ${p[column]}::jsonb)`
              : p[column],
          ]),
        );
        for (const name of shape.derived) Object.assign(set, options.derived?.[name]?.(shape.columns, p));
        const changes = Object.entries(set);
        set.updatedAt = sql`clock_timestamp()`;
        set.version = sql`version + 1`;
        const { guard } = options;
        return returning<StoredRow>(
          any
            .with('locked', (db) => {
              const locked = db
                .selectFrom(table)
                .select(['id as lockedId', sql`to_jsonb(${sql.table(table)})`.as('oldRow')])
                .where('tenantId', '=', p.tenantId)
                .where('id', '=', p.id)
                .forUpdate();
              if (!shape.guarded || !guard) return locked;
              const held = sql`coalesce(${sql.ref(guard.column)}, ${sql.ref(guard.orColumn)})`;
              return locked.where(sql<boolean>`${held} = any(${p.within}::uuid[])`);
            })
            .with('written', (db) => {
              const query = db
                .updateTable(table)
                .from('locked')
                .set(set)
                .whereRef(`${table}.id`, '=', 'locked.lockedId')
                .where((eb) =>
                  eb.or(changes.map(([column, value]) => eb(sql.ref(`${table}.${column}`), 'is distinct from', value))),
                );
              return (shape.conditional ? query.where(versionIn(p.versions)) : query).returning(columns);
            })
            .with('event', (db) =>
              db.insertInto('events').columns(EVENT_COLUMNS).expression(changeEvents.ofUpdate(family, p)),
            )
            .selectFrom('written')
            .selectAll(),
        );
      },
    );
    // Every row in one jsonb parameter, spread into the table's own row type: one text for any
    // number of rows, so that Kysely builds it and the database plans it once, where a multi-row
    // VALUES was built, compiled and planned at every batch (a third of a batch's JavaScript time).
    this.#insertKeys = options.insertColumns.map(sqlNameOf);
    this.#insertMany = new PreparedQuery((p: ChangeParams & { rows: string }) =>
      created(p, (db) =>
        db
          .insertInto(table)
          .columns([...options.insertColumns, 'createdAt', 'updatedAt'])
          .expression(
            sql`select ${sql.join(this.#insertKeys.map((key) => sql.ref(`r.${key}`)))}, statement_timestamp(), statement_timestamp()
              from jsonb_populate_recordset(null::${sql.table(table)}, ${p.rows}::jsonb) as r`,
          ),
      ),
    );
    this.#delete = new PreparedByShape<boolean, WriteParams, { id: string }>(String, (conditional, p) => {
      const query = any.deleteFrom(table).where('tenantId', '=', p.tenantId).where('id', '=', p.id);
      return returning<{ id: string }>(
        any
          .with('written', () => (conditional ? query.where(versionIn(p.versions)) : query).returning(columns))
          .with('event', (db) =>
            db
              .insertInto('events')
              .columns(EVENT_COLUMNS)
              .expression(changeEvents.ofRows('written', `${family}.deleted`, p)),
          )
          .selectFrom('written')
          .select('id'),
      );
    });
    this.#findIdBy = new PreparedByShape<string, { tenantId: string; value: unknown }, { id: string }>(
      (column) => column,
      (column, p) =>
        returning<{ id: string }>(
          any
            .selectFrom(table)
            .select('id')
            .where('tenantId', '=', p.tenantId)
            .where(column, '=', p.value)
            .orderBy('createdAt', 'desc')
            .orderBy('id', 'desc')
            .limit(sql.lit(1)),
        ),
    );
    // A list's first look and a sync's walk: the plan is a range of the sort's index whatever the
    // tenant, the bound or the cursor. Prepared, a first page is planned once per connection (150 µs
    // of PostgreSQL's CPU saved at each run, bench/results/profile-notes.md); a page after a cursor
    // or a bound PostgreSQL still plans at each run, its guess of a range that starts at a parameter
    // being dearer than its plan for the actual value, but no longer parses, nor Kysely compiles.
    this.#pages = new PreparedByShape<PageShape, PageParams, Record<string, unknown>>(
      (shape) => `${this.#sortNumber(shape.key)}|${shape.descending}|${shape.bound ?? ''}|${shape.after}|${shape.rows}`,
      (shape, p) => {
        const rows = any
          .selectFrom(table)
          .select(options.listSelection as never)
          .where('tenantId', '=', p.tenantId);
        const bound = shape.bound === undefined ? undefined : options.filters[shape.bound];
        return keysetPage(bound ? rows.where(bound.column, bound.operator, p.bound) : rows, {
          key: shape.key,
          descending: shape.descending,
          limit: shape.rows - 1,
          after: shape.after ? { value: p.afterValue as string, id: p.afterId as string } : undefined,
        }) as Compilable<Record<string, unknown>>;
      },
      { maxShapes: MAX_PAGE_SHAPES, keepColumnNames: true },
    );
  }

  #sortNumber(key: SortKey<unknown>): number {
    let number = this.#sortNumbers.get(key);
    if (number === undefined) {
      number = this.#sortNumbers.size;
      this.#sortNumbers.set(key, number);
    }
    return number;
  }

  /** The first word of the resource's events (SPEC §14). */
  get family(): EventFamily {
    return this.#options.events;
  }

  /** The table, which names this resource in lock keys. */
  get table(): string {
    return this.#options.table;
  }

  find(handle: Db, tenantId: string, id: string): Promise<StoredRow | undefined> {
    return this.#find.first(handle, { tenantId, id });
  }

  /** The tenant's records of these ids (those it has), in no order. */
  async findMany(handle: Db, tenantId: string, ids: readonly string[]): Promise<StoredRow[]> {
    if (ids.length === 0) return [];
    const any = handle as unknown as Kysely<AnyTables>;
    const query = any
      .selectFrom(this.#options.table)
      .select(this.#options.columns)
      .where('tenantId', '=', tenantId)
      .where('id', '=', sql<string>`any(${[...ids]}::uuid[])`);
    return (await query.execute()) as StoredRow[];
  }

  /** Reads the record and locks it until the transaction `trx` ends: writers of it wait their turn. */
  findForUpdate(trx: Db, tenantId: string, id: string): Promise<StoredRow | undefined> {
    return this.#findForUpdate.first(trx, { tenantId, id });
  }

  async exists(handle: Db, tenantId: string, id: string): Promise<boolean> {
    return (await this.find(handle, tenantId, id)) !== undefined;
  }

  /** Inserts a new record with a new id, and its event; `values` holds every insert column. */
  async insert(handle: Db, change: Change, values: Readonly<Record<string, unknown>>): Promise<StoredRow> {
    return (await this.#insert.first(handle, { ...values, ...changeParams(change), id: newId() })) as StoredRow;
  }

  /**
   * Inserts new records in one statement, each with a new id; the rows come back in the order of
   * `rows`. Each of `rows` holds every insert column.
   */
  async insertMany(
    handle: Db,
    change: Change,
    rows: readonly Readonly<Record<string, unknown>>[],
  ): Promise<StoredRow[]> {
    if (rows.length === 0) return [];
    const { insertColumns } = this.#options;
    const keys = this.#insertKeys;
    const ids = rows.map(() => newId());
    const records = rows.map((row, i) => {
      const record: Record<string, unknown> = {};
      insertColumns.forEach((column, k) => {
        record[keys[k] as string] = column === 'id' ? ids[i] : column === 'tenantId' ? change.tenantId : row[column];
      });
      return record;
    });
    const stored = await this.#insertMany.execute(handle, { ...changeParams(change), rows: JSON.stringify(records) });
    const byId = new Map(stored.map((row) => [row.id, row]));
    return ids.map((id) => byId.get(id) as StoredRow);
  }

  /**
   * Updates in one statement, the If-Match condition included; undefined when the record is not in
   * the tenant; throws PreconditionFailedError when it is, in another version.
   */
  async update(
    handle: Db,
    change: Change,
    id: string,
    values: Readonly<Record<string, unknown>>,
    { expected, derived = [], eventType = null, within, params: extra }: WriteOptions = {},
  ): Promise<StoredRow | undefined> {
    const guarded = within !== undefined;
    const shape = { columns: Object.keys(values), derived, conditional: expected !== undefined, guarded };
    const statement = this.#update.for(shape);
    const params = { ...extra, ...values, ...changeParams(change), id, versions: expected, eventType, within };
    const written = expected?.length === 0 ? undefined : await statement.first(handle, params);
    if (written) return written;
    // Nothing written: no such record, another version than If-Match names, not where the guard
    // allows, or nothing to change.
    const current = await this.find(handle, change.tenantId, id);
    if (current && expected !== undefined && !expected.includes(current.version)) throw new PreconditionFailedError();
    const guard = this.#options.guard;
    if (current && guard && within !== undefined) {
      const held = (current[guard.column] ?? current[guard.orColumn]) as string;
      if (!within.includes(held)) throw new GuardRefusedError(current);
    }
    return current;
  }

  /**
   * The id of the tenant's record whose `column` holds `value` (an e-mail, an external id); of
   * several (lead e-mails are not unique), the most recently created.
   */
  async findIdBy(handle: Db, tenantId: string, column: string, value: unknown): Promise<string | undefined> {
    return (await this.#findIdBy.for(column).first(handle, { tenantId, value }))?.id;
  }

  /** Deletes in one statement, the If-Match condition included; false when the record is not in the tenant. */
  async delete(handle: Db, change: Change, id: string, expected?: ExpectedVersions): Promise<boolean> {
    const statement = this.#delete.for(expected !== undefined);
    const deleted = await conditionalWrite(
      expected,
      () => statement.first(handle, { ...changeParams(change), id, versions: expected }),
      () => this.exists(handle, change.tenantId, id),
    );
    return deleted !== undefined;
  }

  /**
   * Deletes a record on its person's request (SPEC §17), with a `<family>.deleted` event that holds
   * only its id and `reason: erasure`, in one statement; false when the tenant has no such record.
   */
  async erase(handle: Db, change: Change, id: string): Promise<boolean> {
    const { table, events } = this.#options;
    const { rows } = await sql<{ id: string }>`
      with written as (
        delete from ${sql.table(table)} where tenant_id = ${change.tenantId} and id = ${id} returning tenant_id, id
      ), event as (
        insert into events (tenant_id, type, object_id, token_id, request_id, object, previous, reason)
        select tenant_id, ${`${events}.deleted`}, id, ${change.tokenId ?? null}::uuid, ${change.requestId ?? null}::text,
          jsonb_build_object('id', id), '{}'::jsonb, 'erasure'
        from written
      )
      select id from written`.execute(handle);
    return rows.length > 0;
  }

  /**
   * The one place lists are queried: the tenant, the filters, then a keyset page (SPEC §6). Rows
   * keep the names the SQL gives them (see rowsAsNamed). With `scanRows` set, a filtered page of a
   * tenant with more rows than that reads at most that many (scanWindowPage), unless a narrow
   * filter already bounds it. Without it, a `q` search of a tenant larger than a few pages takes
   * the steps of searchPage, so that the planner's guess of the term's frequency cannot make it
   * read the whole tenant.
   */
  async list<Item>(handle: Db, tenantId: string, filters: object, page: KeysetPage<Item>): Promise<ListRows> {
    const given = Object.entries(filters).filter(([, value]) => value !== undefined);
    const [first, ...others] = given;
    if (first === undefined) return this.#indexRangePage(handle, tenantId, undefined, page);
    if (others.length === 0 && this.#options.filters[first[0]]?.boundsSort === page.key) {
      return this.#indexRangePage(handle, tenantId, first, page);
    }
    const any = handle as unknown as Kysely<AnyTables>;
    const tenantRows = any.selectFrom(this.#options.table).where('tenantId', '=', tenantId);
    const selection = this.#options.listSelection;
    const matches: Condition = (eb) => eb.and(given.map(([name, value]) => this.#condition(eb, name, value)));
    const { scanRows } = this.#options;
    const narrow = given.some(([name]) => this.#options.filters[name]?.narrow);
    // A narrow filter (an exact e-mail) has an index that bounds its page; a scan bound bounds every
    // other filter; without one, only a search needs bounding (searchPage).
    const bounding = !narrow && (scanRows !== undefined || this.#searches(filters));
    if (!bounding || !(await this.#largeTenants.has(handle, tenantId))) {
      return this.#page(handle, tenantRows.select(selection as never).where(matches), page);
    }
    if (scanRows === undefined) return searchPage(handle, tenantRows, selection, matches, page);
    return scanWindowPage(handle, tenantRows, selection, matches, page, scanRows);
  }

  /** Whether the filters hold a `q` served by the trigram index (without the separator, see #condition). */
  #searches(filters: { q?: unknown }): boolean {
    return typeof filters.q === 'string' && !filters.q.includes(SEARCH_SEPARATOR);
  }

  /** A page with no filter, or only one that bounds its sort's value: prepared per shape (#pages). */
  async #indexRangePage<Item>(
    handle: Db,
    tenantId: string,
    bound: [string, unknown] | undefined,
    page: KeysetPage<Item>,
  ): Promise<ListRows> {
    const { key, descending, limit, after } = page;
    const [name, value] = bound ?? [];
    const statement = this.#pages.for({
      key: key as SortKey<unknown>,
      descending,
      bound: name,
      after: !!after,
      rows: limit + 1,
    });
    const spec = name === undefined ? undefined : this.#options.filters[name];
    const params = {
      tenantId,
      bound: spec && filterValue(spec, value),
      afterValue: after?.value,
      afterId: after?.id,
    };
    return { rows: await statement.execute(handle, params) };
  }

  async #page<Item>(
    handle: Db,
    query: SelectQueryBuilder<Record<string, Record<string, unknown>>, string, object>,
    page: KeysetPage<Item>,
  ): Promise<ListRows> {
    return { rows: await rowsAsNamed(handle, keysetPage(query, page)) };
  }

  #condition(
    eb: ExpressionBuilder<Record<string, Record<string, unknown>>, string>,
    name: string,
    value: unknown,
  ): AliasableExpression<SqlBool> {
    if (name === 'q') {
      const text = value as string;
      const pattern = containsPattern(text);
      const { searchColumns } = this.#options;
      // Without the separator, a match in the joined text is a match in one column: one condition,
      // served by the one trigram index. With it (never typed, but sendable), each column on its own.
      if (!text.includes(SEARCH_SEPARATOR)) return eb(searchText(searchColumns), 'ilike', pattern);
      return eb.or(searchColumns.map((column) => eb(column, 'ilike', pattern)));
    }
    const spec = this.#options.filters[name];
    if (!spec) throw new Error(`${this.#options.table}: no filter named ${name}`);
    if (spec.json) return eb(spec.column, spec.operator, sql`${JSON.stringify(value)}::jsonb`);
    return eb(spec.column, spec.operator, filterValue(spec, value));
  }
}

/** A filter's value from the query string as its column compares it (not a json one's). */
function filterValue(spec: FilterSpec, value: unknown): unknown {
  return spec.timestamp ? new Date(value as string) : value;
}

/** A statement on a table named at run time, typed as the rows it returns. */
function returning<Row>(query: Compilable<unknown>): Compilable<Row> {
  return query as Compilable<Row>;
}
