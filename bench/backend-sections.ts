/**
 * What the benches that run once per backend share: which backend a run is on (`--backend`, else
 * PostgreSQL when a server is named), and a results file holding one section per backend, where
 * each run replaces its own and keeps the other's (`npm run bench` runs them once for each).
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { benchPostgresUrl, type ScratchDatabase, scratchPglite, scratchPostgres } from './bench-database.js';

export interface BenchBackend {
  /** The PostgreSQL server, or undefined for PGlite. */
  readonly url: string | undefined;
  /** As the results name it: `PostgreSQL` or `PGlite`. */
  readonly name: 'PostgreSQL' | 'PGlite';
}

/** `--backend embedded|pglite|postgres`; without it, PostgreSQL when FUNIL_BENCH_DATABASE_URL is set. */
export function benchBackend(option: string | undefined): BenchBackend {
  if (option !== undefined && !['embedded', 'pglite', 'postgres'].includes(option)) {
    throw new Error(`--backend ${option}: embedded (or pglite) or postgres`);
  }
  const url = option === 'embedded' || option === 'pglite' ? undefined : benchPostgresUrl();
  if (option === 'postgres' && !url) throw new Error('--backend postgres needs FUNIL_BENCH_DATABASE_URL');
  return { url, name: url ? 'PostgreSQL' : 'PGlite' };
}

/** `run` on a new database of `backend` (PostgreSQL's named after `label`), thrown away after. */
export async function onScratch<T>(
  backend: BenchBackend,
  label: string,
  run: (scratch: ScratchDatabase) => Promise<T>,
): Promise<T> {
  const scratch = backend.url ? await scratchPostgres(backend.url, label) : await scratchPglite();
  try {
    return await run(scratch);
  } finally {
    await scratch.drop();
  }
}

/**
 * Writes `path` (making its directory): `head` (its lines), then the sections of `### ` headings it held, less any of the
 * heading `section` starts with, then `section`.
 */
export async function replaceSection(path: string, head: readonly string[], section: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const previous = await readFile(path, 'utf8').catch(() => '');
  const heading = section.split('\n')[0] as string;
  const kept = previous
    .split(/\n(?=### )/)
    .slice(1)
    .filter((old) => old.split('\n')[0] !== heading);
  const sections = [...kept.map((text) => text.trimEnd()), section.trimEnd()].join('\n\n');
  await writeFile(path, [...head, '', sections, ''].join('\n'));
}
