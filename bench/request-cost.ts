/**
 * What one request costs Funil's Node side, apart from the network and the machine's other
 * processes: GET /customers/:id through `inject`, against a bare Fastify route that sends the same
 * statement through a pg pool, in the same process and on the same database, rounds alternating.
 * CPU per request is this process's (user + system) over the round ÷ requests; PostgreSQL runs
 * elsewhere. Funil logs at `info`, as in production, to stdout: redirect it.
 *
 *   FUNIL_BENCH_DATABASE_URL=postgres://… npx tsx bench/request-cost.ts [--requests N] [--rounds N] > /dev/null
 *
 * Any Node.js runs it: `/path/to/node --import tsx bench/request-cost.ts`. It prints to stderr.
 */
import { parseArgs } from 'node:util';
import Fastify, { type FastifyInstance } from 'fastify';
import pg from 'pg';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { withDatabase } from '../test/helpers/postgres-admin.js';
import { benchPostgresUrl, CAPACITY_SETTINGS, createTenant, median, scratchPostgres } from './bench-database.js';

const { values: options } = parseArgs({
  options: {
    requests: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '5' },
    concurrency: { type: 'string', default: '16' },
  },
});
const REQUESTS = Number(options.requests);
const CONCURRENCY = Number(options.concurrency);
const url = benchPostgresUrl();
if (!url) throw new Error('set FUNIL_BENCH_DATABASE_URL (a PostgreSQL server where the user may create databases)');

const scratch = await scratchPostgres(url, 'requestcost');
const funil = await buildApp({
  config: loadConfig({
    NODE_ENV: 'production',
    ...CAPACITY_SETTINGS,
    FUNIL_WEBHOOKS_DELIVER: 'false',
  }),
  database: scratch.database,
  logger: createLogger({ logLevel: 'info' }),
});
const pool = new pg.Pool({ connectionString: withDatabase(url, scratch.name), max: 10 });
// An idle connection ended by the server (the scratch database dropped at the end) must not end the run.
pool.on('error', (error) => process.stderr.write(`bare pool: ${error.message}\n`));
try {
  await funil.ready();
  const tenant = await createTenant(scratch.database, 'Request cost');
  const headers = { authorization: `Bearer ${tenant.token}` };
  const created = await funil.inject({
    method: 'POST',
    url: '/api/external/v1/customers',
    headers: { ...headers, 'content-type': 'application/json' },
    payload: { name: 'Ana Souza', email: 'ana@example.com' },
  });
  const id = (created.json() as { _id: string })._id;

  const bare = Fastify();
  bare.get<{ Params: { id: string } }>('/customers/:id', async (request) => {
    const text = 'select * from customers where id = $1 and tenant_id = $2';
    const result = await pool.query({ name: 'customer', text, values: [request.params.id, tenant.id] });
    return result.rows[0];
  });
  await bare.ready();

  const targets: [string, FastifyInstance, string][] = [
    ['funil', funil, `/api/external/v1/customers/${id}`],
    ['bare', bare, `/customers/${id}`],
  ];
  const cost = async (app: FastifyInstance, path: string, requests: number) => {
    let sent = 0;
    const client = async () => {
      while (sent++ < requests) {
        const answer = await app.inject({ method: 'GET', url: path, headers });
        if (answer.statusCode !== 200) throw new Error(`${path}: ${answer.statusCode} ${answer.body}`);
      }
    };
    const before = process.cpuUsage();
    await Promise.all(Array.from({ length: CONCURRENCY }, client));
    const spent = process.cpuUsage(before);
    return (spent.user + spent.system) / requests;
  };
  for (const [, app, path] of targets) await cost(app, path, REQUESTS / 4);
  const perRound: Record<string, number[]> = { funil: [], bare: [] };
  for (let round = 1; round <= Number(options.rounds); round++) {
    for (const [name, app, path] of targets) perRound[name]?.push(await cost(app, path, REQUESTS));
    process.stderr.write(
      `round ${round}: funil ${perRound.funil?.at(-1)?.toFixed(1)} µs, bare ${perRound.bare?.at(-1)?.toFixed(1)} µs\n`,
    );
  }
  const [f, b] = [median(perRound.funil ?? []), median(perRound.bare ?? [])];
  process.stderr.write(
    `${process.version}: CPU per GET /customers/:id, median of ${options.rounds} rounds of ${REQUESTS}: ` +
      `Funil ${f.toFixed(1)} µs, bare ${b.toFixed(1)} µs, Funil ÷ bare ${(f / b).toFixed(2)}x, Funil − bare ${(f - b).toFixed(1)} µs\n`,
  );
  await bare.close();
} finally {
  await pool.end();
  await funil.close();
  await scratch.drop();
}
