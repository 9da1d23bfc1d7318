/**
 * SPEC §23: an export of a large tenant's leads through the real app (listening on a port, so the
 * file is streamed as a client gets it, never held by `inject`):
 *
 * - the export's rows per second, from POST /exports to `succeeded`;
 * - the download (unzipped on the server, the heavier way) in MB/s;
 * - the process's peak RSS during each, against its RSS before (the server runs in this process);
 * - the longest `GET /leads?limit=10` of another tenant, sent every 50 ms meanwhile: on the
 *   embedded database, what the export costs everyone else; and there, the same export read in one
 *   transaction instead (the fallback after three starts over), with what that costs the others.
 *
 *   npx tsx bench/exports.ts [--rows N] [--format csv|ndjson] [--backend embedded|postgres] [--results DIR]
 *   FUNIL_BENCH_DATABASE_URL=postgres://… npx tsx bench/exports.ts --rows 1000000
 *   Without a PostgreSQL URL (or with --backend embedded) it runs on PGlite; default 100,000 leads
 *   (1,000,000 on PostgreSQL).
 *   Each run replaces its backend's section of DIR/exports.md and keeps the others.
 */
import { get } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { loadConfig } from '../src/config.js';
import { exportRepository } from '../src/exports/export.repository.js';
import { singleTransactionSnapshot } from '../src/exports/export-snapshot.js';
import { writeFile as writeExportFile } from '../src/exports/export-writer.js';
import { buildServices } from '../src/services.js';
import { newId } from '../src/shared/ids.js';
import { benchBackend, onScratch, replaceSection } from './backend-sections.js';
import { benchApp, createTenant, type ScratchDatabase, seedLeads, silent } from './bench-database.js';
import { PeakRss } from './throughput/proc.js';

const API = '/api/external/v1';
const SEED_STEP = 100_000;
const PROBE_EVERY_MS = 50;

const { values: options } = parseArgs({
  options: {
    rows: { type: 'string' },
    format: { type: 'string', default: 'csv' },
    backend: { type: 'string' },
    results: { type: 'string', default: 'bench/results' },
  },
});

const MIB = 1024 * 1024;
const mb = (bytes: number) => (bytes / MIB).toFixed(0);

async function run(scratch: ScratchDatabase, backend: string, rows: number, format: string): Promise<string> {
  const { database, bulk } = scratch;
  const measured = await createTenant(database, 'Measured');
  const neighbour = await createTenant(database, 'Neighbour');
  for (let from = 1; from <= rows; from += SEED_STEP) {
    await seedLeads(bulk, measured, Math.min(SEED_STEP, rows - from + 1), from);
  }
  await seedLeads(bulk, neighbour, 1_000);
  // Seeded rows lack matching keys, which the app would start backfilling beside the export (and
  // on the embedded database, take turns with it): not what is measured here.
  await sql`delete from match_key_backfills`.execute(bulk);
  await sql`vacuum analyze leads`.execute(bulk);
  const app = await benchApp(database);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  const call = async (token: string, method: 'GET' | 'POST', url: string, body?: unknown) => {
    const res = await app.inject({
      method,
      url: `${API}${url}`,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      payload: body ? JSON.stringify(body) : undefined,
    });
    if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
    return res.json();
  };
  // The neighbour's requests meanwhile: the longest one.
  const probeNeighbour = () => {
    let probing = true;
    let longest = 0;
    let count = 0;
    let refused = 0;
    const done = (async () => {
      while (probing) {
        const started = performance.now();
        const res = await app.inject({
          method: 'GET',
          url: `${API}/leads?limit=10`,
          headers: { authorization: `Bearer ${neighbour.token}` },
        });
        if (res.statusCode !== 200) refused++;
        longest = Math.max(longest, performance.now() - started);
        count++;
        await new Promise((resolve) => setTimeout(resolve, PROBE_EVERY_MS));
      }
    })();
    return async () => {
      probing = false;
      await done;
      return { longest, count, refused };
    };
  };
  const stopProbe = probeNeighbour();

  // The bench runs the server in its own process: its RSS is the server's (PeakRss reports MB).
  let rss = new PeakRss(process.pid, 20);
  const before = process.memoryUsage().rss;
  const started = performance.now();
  const { id } = await call(measured.token, 'POST', '/exports', { resource: 'lead', format });
  let state: { status: string; total: number; fileBytes: number };
  for (;;) {
    state = await call(measured.token, 'GET', `/exports/${id}`);
    if (state.status === 'succeeded' || state.status === 'failed') break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const exportMs = performance.now() - started;
  const exportPeak = rss.stop() * MIB;
  const neighbourWait = await stopProbe();
  if (state.status !== 'succeeded') throw new Error(`export ${state.status}`);

  rss = new PeakRss(process.pid, 20);
  const beforeDownload = process.memoryUsage().rss;
  const downloadStarted = performance.now();
  const downloaded = await new Promise<number>((resolve, reject) => {
    get(
      {
        port,
        host: '127.0.0.1',
        path: `${API}/exports/${id}/file`,
        headers: { authorization: `Bearer ${measured.token}` },
      },
      (res) => {
        let bytes = 0;
        res.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
        });
        res.on('end', () => resolve(bytes));
        res.on('error', reject);
      },
    ).on('error', reject);
  });
  const downloadMs = performance.now() - downloadStarted;
  const downloadPeak = rss.stop() * MIB;
  // What the embedded database would cost everyone else with the whole export in one transaction.
  const single = database.backend === 'pglite' ? await oneTransaction() : undefined;
  await app.close();
  async function oneTransaction() {
    const services = buildServices({ database, config: loadConfig({ NODE_ENV: 'production' }), logger: silent });
    const created = await exportRepository.create(database.db, measured.id, {
      id: newId(),
      resource: 'lead',
      format,
      query: {},
      fields: null,
      tokenId: measured.tokenId,
    });
    const stop = probeNeighbour();
    // Let the probe send its first request before the transaction takes the connection.
    await new Promise((resolve) => setTimeout(resolve, 2 * PROBE_EVERY_MS));
    const begun = performance.now();
    await singleTransactionSnapshot(database.db, async (session) => {
      const request = await exportRepository.claim(session.writer, measured.id, created.id, true);
      if (!request) throw new Error('not claimed');
      const spec = services.exportResources.lead;
      await writeExportFile(request, spec, services.catalog, session, () => false);
    });
    const ms = performance.now() - begun;
    return { ms, ...(await stop()) };
  }
  if (downloaded !== state.fileBytes) throw new Error(`downloaded ${downloaded} bytes of ${state.fileBytes}`);
  return [
    `### ${backend}: ${rows.toLocaleString('en')} leads, ${format}`,
    '',
    '| measure | value |',
    '|---|---|',
    `| export, POST to succeeded | ${(exportMs / 1000).toFixed(1)} s (${Math.round(state.total / (exportMs / 1000)).toLocaleString('en')} rows/s) |`,
    `| file | ${mb(state.fileBytes)} MB uncompressed |`,
    `| RSS before the export → peak during it | ${mb(before)} MB → ${mb(exportPeak)} MB |`,
    `| download, unzipped by the server | ${(downloadMs / 1000).toFixed(1)} s (${(state.fileBytes / 1024 / 1024 / (downloadMs / 1000)).toFixed(0)} MB/s) |`,
    `| RSS before the download → peak during it | ${mb(beforeDownload)} MB → ${mb(downloadPeak)} MB |`,
    `| longest \`GET /leads?limit=10\` of another tenant during the export (${neighbourWait.count}, one every ${PROBE_EVERY_MS} ms) | ${neighbourWait.longest.toFixed(0)} ms |`,
    ...(single
      ? [
          `| the same export read in one transaction instead (the embedded fallback) | ${(single.ms / 1000).toFixed(1)} s |`,
          `| longest \`GET /leads?limit=10\` of another tenant meanwhile (${single.refused} of ${single.count} answered 503) | ${single.longest.toFixed(0)} ms |`,
        ]
      : []),
    '',
  ].join('\n');
}

const backend = benchBackend(options.backend);
const rows = Number(options.rows ?? (backend.url ? 1_000_000 : 100_000));
const section = await onScratch(backend, 'benchexp', (scratch) =>
  run(scratch, backend.name, rows, options.format as string),
);
await replaceSection(
  join(options.results as string, 'exports.md'),
  [
    '# Exports of large tenants (SPEC §23)',
    '',
    '`npx tsx bench/exports.ts [--rows N] [--backend embedded|postgres]`; each run replaces its own',
    'section. The server runs in the bench process: RSS is its RSS.',
  ],
  section,
);
process.stdout.write(`${section}\n`);
