/**
 * Whether the reference still sends Funil's SQL: compiles each workload's statement from Funil's
 * own repositories (Kysely, with a driver that runs nothing) and compares it with
 * bench/reference/queries.ts. A difference is reported in the results, not hidden.
 *
 * One difference is on purpose: Funil's list reads its timestamps as PostgreSQL's text (no Date
 * per value), where the reference selects the timestamp columns, as a plain server would. For the
 * list, the statements are compared without their select lists (same table, filter, order, limit).
 */
import {
  CamelCasePlugin,
  type CompiledQuery,
  type DatabaseConnection,
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryResult,
} from 'kysely';
import { DEFAULT_LEAD_STATUSES } from '../../src/config.js';
import type { Tables } from '../../src/db/tables.js';
import { LEAD_SORT_KEYS } from '../../src/leads/lead.repository.js';
import { FIRST_PIPELINE_NAME, stagesOf } from '../../src/pipelines/pipeline.types.js';
import { buildRecordServices } from '../../src/services.js';
import { LIST_LIMIT, SQL, type StatementName } from '../reference/queries.js';

/** The statements that differ, each with Funil's text; empty when the reference matches. */
export async function compareWithFunil(): Promise<{ statement: StatementName; funil: string }[]> {
  const compiled: string[] = [];
  const db = new Kysely<Tables>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => new AnsweringDriver((query) => compiled.push(query.sql)),
      createIntrospector: (kysely) => new PostgresIntrospector(kysely),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
    plugins: [new CamelCasePlugin()],
  });
  const { leads, customers } = buildRecordServices(db, { statuses: DEFAULT_LEAD_STATUSES, scanRows: undefined });
  const actor = { tenantId: TENANT, tokenId: TENANT };
  const tenant = TENANT;
  const captured = async (run: () => Promise<unknown>) => {
    compiled.length = 0;
    await run().catch(() => undefined);
    // The tenant's custom fields and pipelines are read once per tenant and cached: not a request's statement.
    return compiled.find((text) => !CACHED_READS.some((read) => text.includes(read))) ?? '(nothing compiled)';
  };
  const funil: Record<StatementName, string> = {
    listLeads: await captured(() =>
      leads.list(db, tenant, {}, { key: LEAD_SORT_KEYS.createdAt, descending: true, limit: LIST_LIMIT }),
    ),
    findLead: await captured(() => leads.find(db, tenant, tenant)),
    createLead: await captured(() => leads.create(db, actor, { name: 'n', email: 'e@example.com' })),
    updateLeadStatus: await captured(() => leads.setStatus(db, actor, tenant, 'won')),
    findCustomer: await captured(() => customers.find(db, tenant, tenant)),
  };
  await db.destroy();
  const comparable = (name: StatementName, text: string) =>
    name === 'listLeads' ? text.replace(/^select .*? from "leads"/, 'select … from "leads"') : text;
  return (Object.keys(SQL) as StatementName[])
    .filter((name) => comparable(name, funil[name]) !== comparable(name, SQL[name].text))
    .map((statement) => ({ statement, funil: funil[statement] }));
}

const TENANT = '00000000-0000-0000-0000-000000000000';

/** The reads a request finds in a cache of the process, not in the database. */
const CACHED_READS = ['from "custom_fields"', 'from "pipelines"'];

/**
 * Runs nothing, as Kysely's DummyDriver, but answers the tenant's pipelines with its first one
 * (every tenant has one; without it a write stops before its statement) and anything else with no
 * rows, passing each statement to `seen`.
 */
class AnsweringDriver extends DummyDriver {
  constructor(readonly seen: (query: CompiledQuery) => void) {
    super();
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    return {
      executeQuery: async <R>(query: CompiledQuery): Promise<QueryResult<R>> => {
        this.seen(query);
        if (!query.sql.includes('from "pipelines"')) return { rows: [] };
        const now = new Date();
        const first = {
          id: TENANT,
          name: FIRST_PIPELINE_NAME,
          is_default: true,
          stages: stagesOf(DEFAULT_LEAD_STATUSES),
          created_at: now,
          updated_at: now,
        };
        return { rows: [first as R] };
      },
      streamQuery: () => {
        throw new Error('not streamed');
      },
    };
  }
}
