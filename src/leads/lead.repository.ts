import { type Selectable, type SelectQueryBuilder, sql } from 'kysely';
import type { Db } from '../db/database.js';
import { type KeysetPage, keysetPage, rowsAsNamed, type SortKey } from '../db/keyset.js';
import { containsPattern } from '../db/like-pattern.js';
import { conditionalWrite, type ExpectedVersions, versionIn, writeShapeKey } from '../db/precondition.js';
import { PreparedByShape, PreparedQuery } from '../db/prepared-query.js';
import type { LeadTable, Tables } from '../db/tables.js';
import { timestampText } from '../db/timestamp-text.js';
import { newId } from '../shared/ids.js';
import type { LeadListItem } from './lead.schemas.js';

export type LeadRow = Selectable<LeadTable>;

export interface LeadValues {
  name: string;
  email: string | null;
  phone: string | null;
  source: string | null;
  status: string;
  score: number;
  lastContact: Date | null;
  notes: string | null;
}

export interface LeadFilters {
  statuses?: string[] | undefined;
  source?: string | undefined;
  email?: string | undefined;
  q?: string | undefined;
  updatedSince?: string | undefined;
  createdSince?: string | undefined;
  scoreMin?: number | undefined;
  scoreMax?: number | undefined;
}

const LEAD_COLUMNS = [
  'id',
  'tenantId',
  'name',
  'email',
  'phone',
  'source',
  'status',
  'score',
  'lastContact',
  'notes',
  'createdBy',
  'createdAt',
  'updatedAt',
  'version',
] as const;

/**
 * A list item's columns (seed §2.1: nine fields), timestamps as PostgreSQL's text. Under names of
 * their own: an output column named `created_at` would be what `order by created_at` sorts by (a
 * text, in a sort of every row), not the indexed column (test/db/list-plans.test.ts).
 */
const LIST_COLUMNS = [
  'id',
  'name',
  'email',
  'status',
  'score',
  timestampText<string | null>('lastContact').as('lastContactText'),
  'source',
  timestampText('createdAt').as('createdAtText'),
  timestampText('updatedAt').as('updatedAtText'),
] as const;

/** A list row as the SQL names it (snake_case: it skips the camel-case plugin's copy, see list()). */
export interface LeadListRow {
  id: string;
  name: string;
  email: string | null;
  status: string;
  score: number;
  last_contact_text: string | null;
  source: string | null;
  created_at_text: string;
  updated_at_text: string;
}

export type LeadSortField = 'createdAt' | 'updatedAt' | 'name' | 'score' | 'lastContact';

/** Each sort as its index is built (migration 2026-11-21T1200); a never-contacted lead counts as contacted at -infinity. */
export const LEAD_SORT_KEYS: Record<LeadSortField, SortKey<LeadListItem>> = {
  createdAt: { expression: sql`created_at`, type: 'timestamptz', valueOf: (item) => item.createdAt },
  updatedAt: { expression: sql`updated_at`, type: 'timestamptz', valueOf: (item) => item.updatedAt },
  name: { expression: sql`name`, type: 'text', valueOf: (item) => item.name },
  score: { expression: sql`score`, type: 'integer', valueOf: (item) => item.score },
  lastContact: {
    expression: sql`coalesce(last_contact, '-infinity'::timestamptz)`,
    type: 'timestamptz',
    valueOf: (item) => item.lastContact ?? '-infinity',
  },
};

interface LeadKey {
  tenantId: string;
  id: string;
}

/** What an update sets, and whether it carries an If-Match condition: each shape is one statement. */
interface WriteShape {
  columns: readonly (keyof LeadValues)[];
  conditional: boolean;
}

type WriteParams = LeadKey & Partial<LeadValues> & { versions?: readonly number[] };

/** Every query takes the tenant first: a lead of another tenant does not exist here. */
export class LeadRepository {
  readonly #find: PreparedQuery<LeadKey, LeadRow>;
  readonly #create: PreparedQuery<LeadValues & LeadKey & { createdBy: string }, LeadRow>;
  readonly #update: PreparedByShape<WriteShape, WriteParams, LeadRow>;
  readonly #delete: PreparedByShape<boolean, WriteParams, { id: string }>;

  constructor(private readonly db: Db) {
    this.#find = new PreparedQuery(db, (p) =>
      db.selectFrom('leads').select(LEAD_COLUMNS).where('tenantId', '=', p.tenantId).where('id', '=', p.id),
    );
    this.#create = new PreparedQuery(db, (p) =>
      db
        .insertInto('leads')
        .values({
          name: p.name,
          email: p.email,
          phone: p.phone,
          source: p.source,
          status: p.status,
          score: p.score,
          lastContact: p.lastContact,
          notes: p.notes,
          id: p.id,
          tenantId: p.tenantId,
          createdBy: p.createdBy,
        })
        .returning(LEAD_COLUMNS),
    );
    // The row is locked before updatedAt is taken, so a write that waited for another one gets a
    // later time than it (SPEC §6: a walker by updatedAt does not pass it by).
    this.#update = new PreparedByShape<WriteShape, WriteParams, LeadRow>(db, writeShapeKey, (shape, p) => {
      const query = db
        .with('locked', (locked) =>
          locked
            .selectFrom('leads')
            .select('id as lockedId')
            .where('tenantId', '=', p.tenantId)
            .where('id', '=', p.id)
            .forUpdate(),
        )
        .updateTable('leads')
        .from('locked')
        .set({
          ...Object.fromEntries(shape.columns.map((column) => [column, p[column]])),
          updatedAt: sql<Date>`clock_timestamp()`,
          version: sql<number>`version + 1`,
        })
        .whereRef('leads.id', '=', 'locked.lockedId');
      return (shape.conditional ? query.where(versionIn(p.versions)) : query).returning(LEAD_COLUMNS);
    });
    this.#delete = new PreparedByShape(db, String, (conditional, p) => {
      const query = db.deleteFrom('leads').where('tenantId', '=', p.tenantId).where('id', '=', p.id);
      return (conditional ? query.where(versionIn(p.versions)) : query).returning('id');
    });
  }

  /** The one place lists are queried: filters, then a keyset page (SPEC §6). */
  list(tenantId: string, filters: LeadFilters, page: KeysetPage<LeadListItem>): Promise<LeadListRow[]> {
    const query = this.db.selectFrom('leads').select(LIST_COLUMNS).where('tenantId', '=', tenantId);
    return rowsAsNamed<LeadListRow>(this.db, keysetPage(applyLeadFilters(query, filters), page));
  }

  find(tenantId: string, id: string): Promise<LeadRow | undefined> {
    return this.#find.first({ tenantId, id });
  }

  create(tenantId: string, createdBy: string, values: LeadValues): Promise<LeadRow> {
    return this.#create.first({ ...values, id: newId(), tenantId, createdBy }) as Promise<LeadRow>;
  }

  /**
   * Updates in one statement, the If-Match condition included; undefined when the lead is not in
   * the tenant; throws PreconditionFailedError when it is, in another version.
   */
  update(
    tenantId: string,
    id: string,
    patch: Partial<LeadValues>,
    expected?: ExpectedVersions,
  ): Promise<LeadRow | undefined> {
    const columns = Object.keys(patch) as (keyof LeadValues)[];
    const statement = this.#update.for({ columns, conditional: expected !== undefined });
    return conditionalWrite(
      expected,
      () => statement.first({ ...patch, tenantId, id, versions: expected }),
      () => this.#exists(tenantId, id),
    );
  }

  /** Deletes in one statement, the If-Match condition included; false when the lead is not in the tenant. */
  async delete(tenantId: string, id: string, expected?: ExpectedVersions): Promise<boolean> {
    const statement = this.#delete.for(expected !== undefined);
    const deleted = await conditionalWrite(
      expected,
      () => statement.first({ tenantId, id, versions: expected }),
      () => this.#exists(tenantId, id),
    );
    return deleted !== undefined;
  }

  async #exists(tenantId: string, id: string): Promise<boolean> {
    return (await this.find(tenantId, id)) !== undefined;
  }
}

function applyLeadFilters<O>(
  query: SelectQueryBuilder<Tables, 'leads', O>,
  filters: LeadFilters,
): SelectQueryBuilder<Tables, 'leads', O> {
  let filtered = query;
  if (filters.statuses) filtered = filtered.where('status', 'in', filters.statuses);
  if (filters.source !== undefined) filtered = filtered.where('source', '=', filters.source);
  if (filters.email !== undefined) filtered = filtered.where('email', '=', filters.email);
  if (filters.updatedSince !== undefined) filtered = filtered.where('updatedAt', '>=', new Date(filters.updatedSince));
  if (filters.createdSince !== undefined) filtered = filtered.where('createdAt', '>=', new Date(filters.createdSince));
  if (filters.scoreMin !== undefined) filtered = filtered.where('score', '>=', filters.scoreMin);
  if (filters.scoreMax !== undefined) filtered = filtered.where('score', '<=', filters.scoreMax);
  if (filters.q !== undefined) {
    const pattern = containsPattern(filters.q);
    filtered = filtered.where((eb) =>
      eb.or([eb('name', 'ilike', pattern), eb('email', 'ilike', pattern), eb('phone', 'ilike', pattern)]),
    );
  }
  return filtered;
}
