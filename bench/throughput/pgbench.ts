/**
 * The database ceiling: pgbench running Funil's own statements (bench/reference/queries.ts, with
 * pgbench variables for the parameters), as many clients as the servers' pool has connections, each
 * statement prepared once per client (`-M prepared`; Funil prepares its hot statements too, the
 * lists excepted: W2's ceiling is a little higher than what any server sends). Where pgbench cannot
 * make a parameter it is made in SQL: a random existing row is `(select id from bench_lead_ids
 * where n = :n)` (one extra primary-key probe inside the statement), a new lead's id is
 * gen_random_uuid(), its e-mail a concatenation.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DEFAULT_LEAD_STATUSES } from '../../src/config.js';
import { DEFAULT_PHONE_COUNTRY, matchPhone } from '../../src/shared/match-keys.js';
import { SQL, substitute } from '../reference/queries.js';
import { CUSTOMERS, LEADS } from './fixture.js';
import type { Measurement } from './measure.js';
import { summarise } from './measure.js';
import { CpuSpan } from './proc.js';
import {
  FUNIL_ONLY,
  leadFormBody,
  MIX,
  type RequestKind,
  type SharedWorkloadId,
  SINGLE,
  type WorkloadId,
} from './workloads.js';

const CANDIDATES = [process.env.PGBENCH, '/usr/lib/postgresql/15/bin/pgbench', '/usr/bin/pgbench'];

/** The pgbench binary, or why there is none. */
export async function findPgbench(): Promise<{ path: string } | { missing: string }> {
  for (const candidate of CANDIDATES) if (candidate && existsSync(candidate)) return { path: candidate };
  try {
    const { stdout } = await promisify(execFile)('sh', ['-c', 'command -v pgbench']);
    if (stdout.trim()) return { path: stdout.trim() };
  } catch {
    // not on the PATH either
  }
  return { missing: 'pgbench not found (set PGBENCH=/path/to/pgbench, or install postgresql-client)' };
}

const STATUSES = `array[${DEFAULT_LEAD_STATUSES.map((s) => `'${s}'`).join(', ')}]`;

/** One pgbench script per request kind: Funil's statements, each parameter a pgbench variable or an SQL expression. */
function scripts(): Record<RequestKind, string> {
  const tenantId = ':tenant';
  const lead = '(select id from bench_lead_ids where n = :n)';
  const customer = '(select id from bench_customer_ids where n = :n)';
  const randomLead = `\\set n random(1, ${LEADS})\n`;
  return {
    listLeads: `${substitute(SQL.listLeads, { tenantId })};\n`,
    getLead: `${randomLead}${substitute(SQL.findLead, { tenantId, id: lead })};\n`,
    getCustomer: `\\set n random(1, ${CUSTOMERS})\n${substitute(SQL.findCustomer, { tenantId, id: customer })};\n`,
    updateLeadStatus: `${randomLead}\\set s random(1, ${DEFAULT_LEAD_STATUSES.length})\n${substitute(
      SQL.updateLeadStatus,
      {
        tenantId,
        id: lead,
        status: `(${STATUSES})[:s]`,
        eventType: 'null',
        statusChangedType: `'lead.status_changed'`,
        updatedType: `'lead.updated'`,
        tokenId: ':token',
        requestId: `'pgbench'`,
      },
    )};\n`,
    createLead: `\\set n random(1, 1000000000)\n\\set score random(0, 100)\n${substitute(SQL.createLead, {
      name: ':name',
      email: `'lead.' || :n || '@example.com'`,
      phone: ':phone',
      source: ':source',
      pipelineId: 'null',
      status: `'new'`,
      score: ':score',
      lastContact: 'null',
      notes: ':notes',
      externalId: 'null',
      custom: `'{}'::jsonb`,
      matchEmail: `'lead.' || :n || '@example.com'`,
      matchPhone: ':match_phone',
      newId: 'gen_random_uuid()',
      tenantId,
      createdBy: ':token',
      createdType: `'lead.created'`,
      tokenId: ':token',
      requestId: `'pgbench'`,
    })};\n`,
  };
}

export interface PgbenchJob {
  pgbench: string;
  /** The database to run on (a fresh copy of the fixture). */
  url: string;
  workload: WorkloadId;
  clients: number;
  threads: number;
  warmupSec: number;
  durationSec: number;
  tenantId: string;
  tokenId: string;
  /** PIDs of the backends of this database right now. */
  databasePids(): Promise<number[]>;
  loadAverage(): number;
}

export async function runPgbench(job: PgbenchJob): Promise<Measurement> {
  const dir = await mkdtemp(join(tmpdir(), 'funil-pgbench-'));
  try {
    const all = scripts();
    const files: string[] = [];
    if (FUNIL_ONLY.has(job.workload)) throw new Error(`${job.workload} runs on Funil only`);
    const kinds: [RequestKind, number][] =
      job.workload === 'W5'
        ? MIX.map(({ kind, percent }) => [kind, percent])
        : [[SINGLE[job.workload as SharedWorkloadId], 1]];
    for (const [kind, weight] of kinds) {
      const file = join(dir, `${kind}.sql`);
      await writeFile(file, all[kind]);
      files.push('-f', `${file}@${weight}`);
    }
    const form = leadFormBody(1);
    const variables = {
      tenant: job.tenantId,
      token: job.tokenId,
      name: String(form.name),
      phone: String(form.phone),
      match_phone: String(matchPhone(String(form.phone), DEFAULT_PHONE_COUNTRY)),
      source: String(form.source),
      notes: String(form.notes),
    };
    const common = [
      '-n',
      '-M',
      'prepared',
      '-c',
      String(job.clients),
      '-j',
      String(job.threads),
      ...Object.entries(variables).flatMap(([name, value]) => ['-D', `${name}=${value}`]),
      ...files,
    ];
    if (job.warmupSec > 0) await pgbench(job.pgbench, [...common, '-T', String(job.warmupSec), job.url]);

    const prefix = join(dir, 'log');
    // CPU of the backends is read between two points inside the run, when every client is connected.
    const sampleStart = 300;
    const sampleEnd = job.durationSec * 1000 - 200;
    let cpu: { span: CpuSpan; at: number } | undefined;
    let cpuRate: number | undefined;
    const startTimer = setTimeout(async () => {
      cpu = { span: new CpuSpan(await job.databasePids()), at: performance.now() };
    }, sampleStart);
    const endTimer = setTimeout(async () => {
      if (!cpu) return;
      const used = cpu.span.end(await job.databasePids());
      cpuRate = used / (performance.now() - cpu.at);
    }, sampleEnd);
    let output: string;
    try {
      output = await pgbench(job.pgbench, [
        ...common,
        '-T',
        String(job.durationSec),
        '--log',
        `--log-prefix=${prefix}`,
        job.url,
      ]);
    } finally {
      clearTimeout(startTimer);
      clearTimeout(endTimer);
    }
    const processed = Number(output.match(/number of transactions actually processed: (\d+)/)?.[1] ?? 0);
    const failed = Number(output.match(/number of failed transactions: (\d+)/)?.[1] ?? 0);
    const tps = Number(output.match(/tps = ([\d.]+)/)?.[1] ?? 0);
    const latencies: number[] = [];
    for (const file of (await readdir(dir)).filter((name) => name.startsWith('log.'))) {
      for (const line of (await readFile(join(dir, file), 'utf8')).split('\n')) {
        const fields = line.split(' ');
        // client transaction_no time_us script_no epoch epoch_us; a failed one has "failed" for its time.
        if (fields.length >= 3 && /^\d+$/.test(fields[2] as string)) latencies.push(Number(fields[2]) / 1000);
      }
    }
    const summary = summarise(latencies);
    return {
      responses: processed,
      non2xx: 0,
      errors: failed,
      statusCodes: {},
      durationSec: job.durationSec,
      rps: tps,
      p50Ms: summary.p50Ms,
      p90Ms: Number.NaN,
      p99Ms: summary.p99Ms,
      maxMs: summary.maxMs,
      bytesPerResponse: 0,
      peakRssMb: null,
      cpuMsPerRequest: null,
      dbCpuMsPerRequest: cpuRate !== undefined && tps > 0 ? (cpuRate * 1000) / tps : null,
      loadgenCpuMsPerRequest: null,
      cpuMs: null,
      logBytesPerRequest: null,
      health: null,
      loopDelay: null,
      loadAverage1m: job.loadAverage(),
      windowUs: null,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function pgbench(binary: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve(output) : reject(new Error(`pgbench exited ${code}:\n${output.slice(-2_000)}`)),
    );
  });
}
