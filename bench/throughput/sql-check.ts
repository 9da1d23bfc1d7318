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
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
} from 'kysely';
import { DEFAULT_LEAD_STATUSES } from '../../src/config.js';
import type { Tables } from '../../src/db/tables.js';
import { LEAD_SORT_KEYS } from '../../src/leads/lead.repository.js';
import { buildRecordServices } from '../../src/services.js';
import { LIST_LIMIT, SQL, type StatementName } from '../reference/queries.js';

/** The statements that differ, each with Funil's text; empty when the reference matches. */
export async function compareWithFunil(): Promise<{ statement: StatementName; funil: string }[]> {
  const compiled: string[] = [];
  const db = new Kysely<Tables>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (kysely) => new PostgresIntrospector(kysely),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
    plugins: [new CamelCasePlugin()],
    log: (event) => {
      compiled.push(event.query.sql);
    },
  });
  const { leads, customers } = buildRecordServices(db, { statuses: DEFAULT_LEAD_STATUSES, scanRows: undefined });
  const actor = { tenantId: '00000000-0000-0000-0000-000000000000', tokenId: '00000000-0000-0000-0000-000000000000' };
  const tenant = '00000000-0000-0000-0000-000000000000';
  const captured = async (run: () => Promise<unknown>) => {
    compiled.length = 0;
    await run().catch(() => undefined);
    // The tenant's custom fields are read once per tenant and cached (5 s): not a request's statement.
    return compiled.find((text) => !text.includes('from "custom_fields"')) ?? '(nothing compiled)';
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
