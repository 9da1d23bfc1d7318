/**
 * The thinnest real implementation of the benchmark's workloads: Fastify, the same SQL as Funil
 * (./queries.ts) with the values it takes (SPEC §21's match keys), and nothing else: no
 * validation, no authentication, no rate limit, no logging, no response schema (Fastify falls back
 * to JSON.stringify). The Authorization header is ignored and the tenant is fixed. It is what
 * Funil's rows in bench/results are measured against.
 *
 *   REFERENCE_DATABASE_URL=postgres://…  (a pg pool of REFERENCE_POOL_SIZE, default 10: Funil's default)
 *   REFERENCE_DATA_DIR=/path             (else: PGlite in that directory, through node-postgres as Funil reaches it)
 *   REFERENCE_SHARED_BUFFERS_MB=32       (PGlite's buffer cache: the bench gives it Funil's)
 *   REFERENCE_TENANT_ID, REFERENCE_TOKEN_ID (the `created_by` of new leads), PORT, HOST
 *   REFERENCE_SCHEMA=minimal             (PostgreSQL: the minimal schema's tables and statements, queries.ts)
 *   REFERENCE_EVENTS=off                 (Funil's schema and statements, less the change feed's event)
 */
import { PGlite } from '@electric-sql/pglite';
import { btree_gin } from '@electric-sql/pglite/contrib/btree_gin';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import Fastify from 'fastify';
import pg from 'pg';
import { v7 } from 'uuid';
// The raw-protocol socket Funil reaches PGlite through: the same path to the same database.
import { pgliteConnection } from '../../src/db/pglite-socket.js';
// SPEC §21's match keys, as Funil stores them with each lead: the same SQL needs the same values.
import { DEFAULT_PHONE_COUNTRY, matchEmail, matchPhone } from '../../src/shared/match-keys.js';
import {
  bind,
  LIST_LIMIT,
  MINIMAL_SQL,
  NO_EVENT_SQL,
  type Query,
  renderCustomer,
  renderLead,
  renderLeadListItem,
  SQL as SAME_SCHEMA_SQL,
  type Statement,
} from './queries.js';

const env = process.env;
const tenantId = required('REFERENCE_TENANT_ID');
const tokenId = required('REFERENCE_TOKEN_ID');
const prefix = '/api/external/v1';

/** REFERENCE_SCHEMA=minimal: the thin server on a schema of its own (queries.ts, MINIMAL_SCHEMA). */
const minimal = env.REFERENCE_SCHEMA === 'minimal';
const SQL = minimal ? MINIMAL_SQL : env.REFERENCE_EVENTS === 'off' ? NO_EVENT_SQL : SAME_SCHEMA_SQL;
/** The minimal schema has no match keys: its server does not compute them. */
const withMatchKeys = (SQL.createLead.params as readonly string[]).includes('matchEmail');
const storage = await openStorage();
const app = Fastify({ logger: false, bodyLimit: 1024 * 1024 });
app.addHook('onClose', () => storage.close());

const run = (statement: Statement, values: Parameters<typeof bind>[1]) =>
  storage.query(statement.text, bind(statement, values), statement.name);

app.get('/health', async () => ({ status: 'ok' }));

app.get(`${prefix}/leads`, async () => {
  const rows = await run(SQL.listLeads, { tenantId });
  return rows.slice(0, LIST_LIMIT).map(renderLeadListItem);
});

app.get<{ Params: { id: string } }>(`${prefix}/leads/:id`, async (request, reply) => {
  const [row] = await run(SQL.findLead, { tenantId, id: request.params.id });
  return row ? renderLead(row) : reply.code(404).send({ success: false });
});

app.post<{ Body: Record<string, unknown> }>(`${prefix}/leads`, async (request, reply) => {
  const body = request.body;
  const [row] = await run(SQL.createLead, {
    name: body.name,
    email: body.email,
    phone: body.phone,
    source: body.source,
    status: body.status ?? 'new',
    score: body.score ?? 0,
    lastContact: body.lastContact,
    notes: body.notes,
    externalId: body.externalId,
    custom: body.custom ?? {},
    ...(withMatchKeys && {
      matchEmail: matchEmail(body.email as string | undefined),
      matchPhone: matchPhone(body.phone as string | undefined, DEFAULT_PHONE_COUNTRY),
    }),
    newId: v7(),
    tenantId,
    createdBy: tokenId,
    createdType: 'lead.created',
    tokenId,
    requestId: request.id,
  });
  return reply.code(201).send(renderLead(row as Record<string, unknown>));
});

app.put<{ Params: { id: string }; Body: { status: string } }>(`${prefix}/leads/:id/status`, async (request, reply) => {
  const [row] = await run(SQL.updateLeadStatus, {
    tenantId,
    id: request.params.id,
    status: request.body.status,
    statusChangedType: 'lead.status_changed',
    updatedType: 'lead.updated',
    tokenId,
    requestId: request.id,
  });
  if (row) return renderLead(row);
  // Nothing written: the status was already that one (or no such lead); the row as it is.
  const [current] = await run(SQL.findLead, { tenantId, id: request.params.id });
  return current ? renderLead(current) : reply.code(404).send({ success: false });
});

app.get<{ Params: { id: string } }>(`${prefix}/customers/:id`, async (request, reply) => {
  const [row] = await run(SQL.findCustomer, { tenantId, id: request.params.id });
  return row ? renderCustomer(row) : reply.code(404).send({ success: false });
});

await app.listen({ host: env.HOST ?? '127.0.0.1', port: Number(env.PORT ?? 3100) });
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    app.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}

async function openStorage(): Promise<{ query: Query; close(): Promise<void> }> {
  const url = env.REFERENCE_DATABASE_URL;
  const { pool, close } = url
    ? { pool: new pg.Pool({ connectionString: url, max: Number(env.REFERENCE_POOL_SIZE ?? 10) }), close: undefined }
    : await pglitePool();
  return {
    query: async (text, params, name) =>
      (await pool.query(name ? { name, text, values: params } : { text, values: params })).rows,
    close: () => pool.end().finally(close),
  };
}

/** PGlite in REFERENCE_DATA_DIR, one connection, reached as Funil reaches it (db/database.ts). */
async function pglitePool(): Promise<{ pool: pg.Pool; close: () => Promise<void> }> {
  const sharedBuffersMb = process.env.REFERENCE_SHARED_BUFFERS_MB;
  const pglite = await PGlite.create(required('REFERENCE_DATA_DIR'), {
    extensions: { pg_trgm, btree_gin },
    ...(sharedBuffersMb && {
      startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${sharedBuffersMb}MB`],
    }),
  });
  const pool = new pg.Pool({ ...pgliteConnection(pglite), max: 1 });
  return { pool, close: () => pglite.close() };
}

function required(name: string): string {
  const value = env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
}
