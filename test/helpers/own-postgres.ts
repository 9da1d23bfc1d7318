import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chown, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { scratchDir } from './scratch-dir.js';
import { freePort } from './server-process.js';

const run = promisify(execFile);

/**
 * A PostgreSQL server of the test's own, in a temporary directory on a free port, which the test
 * may stop and start at will (the shared development and CI servers must never be stopped).
 */
export interface OwnPostgres {
  /** A database `funil` on it. */
  readonly url: string;
  readonly port: number;
  /** `pg_ctl stop`: `immediate` is a crash (no checkpoint, every backend killed at once). */
  stop(mode?: 'immediate' | 'fast'): Promise<void>;
  /** `pg_ctl start`, resolving once it accepts connections. */
  start(): Promise<void>;
  /**
   * SIGSTOP to every process of the server, or SIGCONT: a server that stops answering without
   * closing anything, as a hung host or a network partition looks to a client.
   */
  signal(signal: 'SIGSTOP' | 'SIGCONT'): Promise<void>;
  /** Stops it whatever its state and deletes its files. */
  destroy(): Promise<void>;
}

/** The newest installed PostgreSQL's bin directory (Debian's layout), if any. */
export function postgresBinaries(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(a) - Number(b));
  const newest = versions.at(-1);
  return newest === undefined ? undefined : join(root, newest, 'bin');
}

/** Why a test that needs its own PostgreSQL cannot run here, or false; in CI a missing one is a failure. */
export function ownPostgresSkipReason(): string | false {
  if (postgresBinaries()) return false;
  if (process.env.CI) throw new Error('CI must run the fault tests: install PostgreSQL (Debian: postgresql)');
  return 'PostgreSQL is not installed (/usr/lib/postgresql/*/bin)';
}

const isRoot = process.getuid?.() === 0;

/** PostgreSQL refuses to run as root: as root, its commands run as the `postgres` user. */
async function asPostgres(command: string, args: string[]): Promise<void> {
  if (!isRoot) {
    await run(command, args, { timeout: 60_000 });
    return;
  }
  const quoted = [command, ...args].map((a) => `'${a.replaceAll("'", `'\\''`)}'`).join(' ');
  await run('su', ['postgres', '-s', '/bin/sh', '-c', quoted], { timeout: 60_000 });
}

export async function startOwnPostgres(): Promise<OwnPostgres> {
  const bin = postgresBinaries();
  if (!bin) throw new Error('PostgreSQL is not installed');
  const dir = await scratchDir('funil-own-pg-');
  if (isRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    await chown(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  const port = await freePort();
  const data = join(dir, 'data');
  await asPostgres(join(bin, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100`;
  const pgCtl = (...args: string[]) => asPostgres(join(bin, 'pg_ctl'), ['-D', data, ...args]);
  const start = () => pgCtl('-o', options, '-l', join(dir, 'server.log'), '-w', '-t', '30', 'start');
  await start();
  const admin = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/postgres` });
  await admin.connect();
  await admin.query('create database funil');
  await admin.end();

  const signal = async (name: 'SIGSTOP' | 'SIGCONT') => {
    const postmaster = Number((await readFile(join(data, 'postmaster.pid'), 'utf8')).split('\n')[0]);
    // A stopped postmaster forks no new backend: stop it first, then the backends it has.
    if (name === 'SIGSTOP') process.kill(postmaster, name);
    for (const pid of await childrenOf(postmaster)) process.kill(pid, name);
    if (name === 'SIGCONT') process.kill(postmaster, name);
  };
  let destroyed = false;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/funil`,
    port,
    stop: (mode = 'immediate') => pgCtl('-m', mode, '-w', '-t', '30', 'stop'),
    start,
    signal,
    async destroy() {
      if (destroyed) return;
      destroyed = true;
      await signal('SIGCONT').catch(() => {});
      try {
        await pgCtl('-m', 'immediate', '-w', '-t', '10', 'stop');
      } catch {
        // Already stopped, or pg_ctl failed: the postmaster's PID file says whom to end.
        await killPostmaster(data);
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function childrenOf(parent: number): Promise<number[]> {
  const children: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // "pid (comm) state ppid ...": the command may hold spaces, the part after the last ')' does not.
      const stat = await readFile(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === parent) children.push(Number(entry));
    } catch {
      // The process ended meanwhile.
    }
  }
  return children;
}

async function killPostmaster(data: string): Promise<void> {
  try {
    const pid = Number((await readFile(join(data, 'postmaster.pid'), 'utf8')).split('\n')[0]);
    if (pid > 0) process.kill(pid, 'SIGQUIT');
  } catch {
    // No PID file, or no such process: nothing is running.
  }
}
