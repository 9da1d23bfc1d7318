/**
 * The statements Funil sends for each benchmark workload, written out by hand for the reference
 * server: the text is what Kysely compiles from src/leads/lead.repository.ts and
 * src/customers/customer.repository.ts (bench/throughput/sql-check.ts compares the two at the start of
 * every run and says so when they drift). Rows come back snake_case; the render functions give
 * them the API's keys in the API's order, with JSON.stringify doing the rest.
 *
 * Why a copy, not Funil's statements: the reference is the floor Funil is measured against, a
 * server with none of Funil's code (no Kysely, no field tables) sending the same SQL.
 */

const LEAD_COLUMNS =
  '"id", "tenant_id", "name", "email", "phone", "source", "pipeline_id", "status", "score", "last_contact", "notes", "external_id", "customer_id", "custom", "created_by", "created_at", "updated_at", "version"';

/** The event a write adds in its own statement (SPEC §14): see src/events/change-events.ts. */
const EVENT_INSERT =
  'insert into "events" ("tenant_id", "type", "object_id", "token_id", "request_id", "object", "previous")';

export interface Statement {
  readonly text: string;
  /** What each `$n` stands for, in order. */
  readonly params: readonly Param[];
  /**
   * Set on the statements Funil runs as named prepared statements (its PreparedQuery ones,
   * src/db/named-statements.ts): the reference names them too on PostgreSQL, so the database does
   * the same work for both.
   */
  readonly name?: string;
}

export type Param =
  | 'tenantId'
  | 'id'
  | 'status'
  | 'name'
  | 'email'
  | 'phone'
  | 'source'
  | 'pipelineId'
  | 'score'
  | 'lastContact'
  | 'notes'
  | 'newId'
  | 'createdBy'
  | 'externalId'
  | 'custom'
  | 'matchEmail'
  | 'matchPhone'
  | 'tokenId'
  | 'requestId'
  | 'eventType'
  | 'createdType'
  | 'statusChangedType'
  | 'updatedType';

/** The page size of the list workload (SPEC §6 default). */
export const LIST_LIMIT = 100;

export const SQL = {
  listLeads: {
    name: 'reference_list_leads',
    // The limit is the page size plus one, which tells whether a next page exists.
    text: `select "id", "name", "email", "status", "score", "last_contact", "source", "created_at", "updated_at" from "leads" where "tenant_id" = $1 order by created_at desc, id desc limit ${LIST_LIMIT + 1}`,
    params: ['tenantId'],
  },
  findLead: {
    name: 'reference_find_lead',
    text: `select ${LEAD_COLUMNS} from "leads" where "tenant_id" = $1 and "id" = $2`,
    params: ['tenantId', 'id'],
  },
  createLead: {
    name: 'reference_create_lead',
    text: `with "written" as (insert into "leads" ("name", "email", "phone", "source", "pipeline_id", "status", "score", "last_contact", "notes", "external_id", "custom", "match_email", "match_phone", "id", "tenant_id", "created_by", "created_at", "updated_at") values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, statement_timestamp(), statement_timestamp()) returning ${LEAD_COLUMNS}), "event" as (${EVENT_INSERT} select tenant_id, $17, id, $18::uuid, $19::text, to_jsonb("written"), '{}'::jsonb from "written") select * from "written"`,
    params: [
      'name',
      'email',
      'phone',
      'source',
      'pipelineId',
      'status',
      'score',
      'lastContact',
      'notes',
      'externalId',
      'custom',
      'matchEmail',
      'matchPhone',
      'newId',
      'tenantId',
      'createdBy',
      'createdType',
      'tokenId',
      'requestId',
    ],
  },
  updateLeadStatus: {
    name: 'reference_update_lead_status',
    // The row is locked (and read) first, so that updated_at is taken after any write it waited for
    // and the event can name the former values; a status that does not change writes nothing.
    text: `with "locked" as (select "id" as "locked_id", to_jsonb("leads") as "old_row" from "leads" where "tenant_id" = $1 and "id" = $2 for update), "written" as (update "leads" set "status" = $3, "updated_at" = clock_timestamp(), "version" = version + 1 from "locked" where "leads"."id" = "locked"."locked_id" and "leads"."status" is distinct from $4 returning ${LEAD_COLUMNS}), "event" as (${EVENT_INSERT} 
      select w.tenant_id,
        coalesce($5::text,
          case when d.previous ? 'status' then $6 else $7 end),
        w.id, $8::uuid, $9::text, n.new_row, d.previous
      from written w cross join locked l
      -- offset 0 keeps the planner from inlining new_row into the filter below, which made it
      -- build the row's jsonb twice per column: a third of a status change's database time.
      cross join lateral (select to_jsonb(w) as new_row offset 0) n
      cross join lateral (
        select coalesce(jsonb_object_agg(o.key, o.value), '{}'::jsonb) as previous
        from jsonb_each(l.old_row) o
        where o.key not in ('version', 'updated_at')
          and n.new_row ? o.key
          and o.value is distinct from n.new_row -> o.key
      ) d) select * from "written"`,
    params: [
      'tenantId',
      'id',
      'status',
      'status',
      'eventType',
      'statusChangedType',
      'updatedType',
      'tokenId',
      'requestId',
    ],
  },
  findCustomer: {
    name: 'reference_find_customer',
    text: 'select "id", "tenant_id", "first_name", "last_name", "name", "email", "phone", "status", "type", "value", "auto_payment", "notes", "external_id", "custom", "created_at", "updated_at", "version" from "customers" where "tenant_id" = $1 and "id" = $2',
    params: ['tenantId', 'id'],
  },
} as const satisfies Record<string, Statement>;

/**
 * Funil's statements without the change feed's event (SPEC §14's outbox): the same lead insert, and
 * the same locked status update, on the same schema. Against SQL, the outbox's cost on a write.
 */
export const NO_EVENT_SQL = {
  ...SQL,
  createLead: rewrite(SQL.createLead, 'reference_create_lead_no_event', [
    [/^with "written" as \((.*)\), "event" as .*$/s, '$1'],
  ]),
  updateLeadStatus: rewrite(SQL.updateLeadStatus, 'reference_update_lead_status_no_event', [
    [', to_jsonb("leads") as "old_row"', ''],
    [/, "event" as .*(?= select \* from "written"$)/s, ''],
  ]),
} as const satisfies Record<StatementName, Statement>;

/**
 * The statement with each replacement applied in turn (one that no longer matches, the statement
 * having changed, throws), keeping the parameters up to the highest `$n` left in its text: the
 * event's come last.
 */
function rewrite(statement: Statement, name: string, replacements: [string | RegExp, string][]): Statement {
  const text = replacements.reduce((current, [pattern, replacement]) => {
    const next = current.replace(pattern, replacement);
    if (next === current) throw new Error(`queries.ts: ${pattern} no longer matches ${current}`);
    return next;
  }, statement.text);
  const highest = Math.max(...[...text.matchAll(/\$(\d+)/g)].map((match) => Number(match[1])));
  return { name, text, params: statement.params.slice(0, highest) };
}

const MINIMAL_LEADS = '"minimal"."leads"';
const MINIMAL_LEAD_COLUMNS =
  '"id", "tenant_id", "name", "email", "phone", "source", "status", "score", "last_contact", "notes", "created_by", "created_at", "updated_at"';

/**
 * What a thin server on a schema of its own would send (issue 21's "thin server"): the fields of
 * the workloads and nothing else — no version, no event, no custom fields, no external id — on the
 * tables of MINIMAL_SCHEMA (schema `minimal`). Against these, Funil's figures show what
 * its schema costs (indexes, the change feed), besides what its Node side costs.
 */
export const MINIMAL_SQL = {
  listLeads: {
    ...SQL.listLeads,
    name: 'minimal_list_leads',
    text: SQL.listLeads.text.replace('from "leads"', `from ${MINIMAL_LEADS}`),
  },
  findLead: {
    name: 'minimal_find_lead',
    text: `select ${MINIMAL_LEAD_COLUMNS} from ${MINIMAL_LEADS} where "tenant_id" = $1 and "id" = $2`,
    params: ['tenantId', 'id'],
  },
  createLead: {
    name: 'minimal_create_lead',
    text: `insert into ${MINIMAL_LEADS} (${MINIMAL_LEAD_COLUMNS}) values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, statement_timestamp(), statement_timestamp()) returning ${MINIMAL_LEAD_COLUMNS}`,
    params: [
      'newId',
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
    ],
  },
  updateLeadStatus: {
    name: 'minimal_update_lead_status',
    text: `update ${MINIMAL_LEADS} set "status" = $3, "updated_at" = clock_timestamp() where "tenant_id" = $1 and "id" = $2 and "status" is distinct from $3 returning ${MINIMAL_LEAD_COLUMNS}`,
    params: ['tenantId', 'id', 'status'],
  },
  findCustomer: {
    name: 'minimal_find_customer',
    text: 'select "id", "tenant_id", "first_name", "last_name", "name", "email", "phone", "status", "type", "value", "auto_payment", "notes", "created_at", "updated_at" from "minimal"."customers" where "tenant_id" = $1 and "id" = $2',
    params: ['tenantId', 'id'],
  },
} as const satisfies Record<StatementName, Statement>;

/**
 * The minimal schema, filled from the benchmark's copy of Funil's tables (the same rows and ids):
 * a primary key on each table and the one index its list needs. Run on the copy, as one script
 * (then vacuumed and analysed, as the template is).
 */
export const MINIMAL_SCHEMA = `
  create schema minimal;
  create table minimal.leads as
    select id, tenant_id, name, email, phone, source, status, score, last_contact, notes, created_by, created_at, updated_at
    from public.leads;
  alter table minimal.leads add primary key (id);
  create index minimal_leads_tenant_created_idx on minimal.leads (tenant_id, created_at desc, id desc);
  create table minimal.customers as
    select id, tenant_id, first_name, last_name, name, email, phone, status, type, value, auto_payment, notes, created_at, updated_at
    from public.customers;
  alter table minimal.customers add primary key (id);
`;

/** The statement's parameters in `$n` order, from named values. */
export function bind(statement: Statement, values: Partial<Record<Param, unknown>>): unknown[] {
  return statement.params.map((param) => values[param] ?? null);
}

/** The statement with each `$n` replaced by the SQL expression given for its parameter (pgbench variables). */
export function substitute(statement: Statement, expressions: Partial<Record<Param, string>>): string {
  return statement.text.replace(/\$(\d+)/g, (_, n: string) => {
    const param = statement.params[Number(n) - 1];
    const expression = param && expressions[param];
    if (!expression) throw new Error(`no expression for $${n} (${param}) in ${statement.text}`);
    return expression;
  });
}

export type StatementName = keyof typeof SQL;

export type Row = Record<string, unknown>;

/** Runs one statement; the reference has one for pg and one for PGlite. */
export type Query = (text: string, params: unknown[], name?: string) => Promise<Row[]>;

function iso(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  return value instanceof Date ? value.toISOString() : new Date(String(value)).toISOString();
}

export function renderLead(row: Row) {
  return {
    _id: row.id,
    name: row.name,
    email: row.email,
    phone: row.phone,
    source: row.source,
    // A lead in its tenant's first pipeline holds null; that pipeline's id is the tenant's.
    pipeline: row.pipeline_id ?? row.tenant_id,
    status: row.status,
    score: row.score,
    lastContact: iso(row.last_contact),
    notes: row.notes,
    externalId: row.external_id,
    customerId: row.customer_id,
    custom: row.custom,
    tenant: row.tenant_id,
    createdBy: row.created_by,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

export function renderLeadListItem(row: Row) {
  return {
    _id: row.id,
    name: row.name,
    email: row.email,
    status: row.status,
    score: row.score,
    lastContact: iso(row.last_contact),
    source: row.source,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

export function renderCustomer(row: Row) {
  return {
    _id: row.id,
    id: row.id,
    firstName: row.first_name,
    lastName: row.last_name,
    name: row.name,
    email: row.email,
    phone: row.phone,
    status: row.status,
    type: row.type,
    value: Number(row.value),
    autoPayment: row.auto_payment,
    notes: row.notes,
    externalId: row.external_id,
    custom: row.custom,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}
