import { fields, table, when } from './output.js';
import { pollUntil } from './poll.js';
import { type Progress, Rate } from './progress.js';
import type { ServerClient } from './server-client.js';

/** How many refused rows the summary shows. */
export const FIRST_ERRORS = 10;

/** An import as `GET /imports/:id` returns it (SPEC §23). */
export interface ImportState {
  id: string;
  resource: 'lead' | 'customer';
  format: 'csv' | 'ndjson';
  upsert: 'email' | 'externalId' | null;
  dryRun: boolean;
  status: 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';
  total: number;
  processed: number;
  created: number;
  updated: number;
  failed: number;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  revert: {
    status: 'running' | 'succeeded';
    deleted: number;
    restored: number;
    skipped: number;
    startedAt: string;
    finishedAt: string | null;
  } | null;
}

/** A row an import refused, or a record its revert left as it was. */
export interface RowError {
  row: number;
  field: string | null;
  code: string;
  message: string;
  recordId: string | null;
}

export type Phase = 'import' | 'revert';

export const importPath = (id: string, rest = '') => `/imports/${encodeURIComponent(id)}${rest}`;

export function isOver(state: ImportState): boolean {
  return state.status === 'succeeded' || state.status === 'failed' || state.status === 'cancelled';
}

/**
 * Reads the import until `done` says it is over, showing its progress; stops early, with the last
 * state read, when `signal` aborts (Ctrl-C).
 */
export async function follow(
  client: ServerClient,
  id: string,
  progress: Progress,
  done: (state: ImportState) => boolean,
  signal: AbortSignal,
): Promise<ImportState> {
  const rate = new Rate();
  const show = (state: ImportState) => {
    if (state.revert) {
      const { deleted, restored, skipped } = state.revert;
      progress.show({
        label: 'reverting',
        done: deleted + restored + skipped,
        total: undefined,
        unit: 'records',
        rate: undefined,
      });
    } else {
      const running = state.status === 'running';
      progress.show({
        label: state.status,
        done: state.processed,
        total: state.total,
        unit: 'rows',
        rate: running ? rate.of(state.processed) : undefined,
      });
    }
  };
  return pollUntil(() => client.get<ImportState>(importPath(id)), show, done, signal);
}

/** A page of an import's errors, and the cursor of the next. */
export async function errorPage(
  client: ServerClient,
  id: string,
  phase: Phase,
  limit: number,
  cursor?: string,
): Promise<{ errors: RowError[]; next: string | undefined }> {
  const query = new URLSearchParams({ phase, limit: String(limit), ...(cursor && { cursor }) });
  const answer = await client.call<RowError[]>('GET', importPath(id, `/errors?${query}`));
  return { errors: answer.body, next: answer.headers.get('x-next-cursor') ?? undefined };
}

/** `ROW FIELD MESSAGE` (or RECORD for a revert), the way the summary and `imports errors` show them. */
export function errorTable(errors: readonly RowError[], phase: Phase, header = true): string {
  const rows = errors.map((error) => [
    String(error.row),
    phase === 'revert' ? (error.recordId ?? '-') : (error.field ?? '-'),
    error.message,
  ]);
  const lines = table(['row', phase === 'revert' ? 'record' : 'field', 'message'], rows).split('\n');
  return (header ? lines : lines.slice(1)).join('\n');
}

/** The import's outcome in a sentence, then its counts. */
export function summary(state: ImportState): string {
  const what = state.dryRun ? 'Dry run' : 'Import';
  const took = seconds(state.startedAt, state.finishedAt);
  const rows = `${state.processed.toLocaleString('en-US')} of ${state.total.toLocaleString('en-US')} rows`;
  const lines = [`${what} ${state.id} ${state.status}: ${rows}${took ? ` in ${took}` : ''}.`];
  if (state.dryRun) lines.push('Nothing was written: the counts are what the import would do.');
  lines.push(
    fields([
      [state.dryRun ? 'would create' : 'created', count(state.created)],
      [state.dryRun ? 'would update' : 'updated', count(state.updated)],
      ['failed', count(state.failed)],
    ]),
  );
  return lines.join('\n');
}

/** Every field of an import, for `funil imports status`. */
export function details(state: ImportState): string {
  const pairs: [string, string][] = [
    ['id', state.id],
    ['resource', state.resource],
    ['format', state.format],
    ['upsert', state.upsert ?? '-'],
    ['dry run', state.dryRun ? 'yes' : 'no'],
    ['status', state.status],
    ['rows', `${count(state.processed)} of ${count(state.total)} done`],
    ['created', count(state.created)],
    ['updated', count(state.updated)],
    ['failed', count(state.failed)],
    ['queued at', when(state.createdAt)],
    ['started', when(state.startedAt)],
    ['finished', when(state.finishedAt)],
  ];
  if (state.revert) {
    const { status, deleted, restored, skipped } = state.revert;
    pairs.push([
      'revert',
      `${status}: ${count(deleted)} deleted, ${count(restored)} restored, ${count(skipped)} skipped`,
    ]);
  }
  return fields(pairs);
}

export function count(value: number): string {
  return value.toLocaleString('en-US');
}

function seconds(from: string | null, to: string | null): string | undefined {
  if (!from || !to) return undefined;
  return `${((Date.parse(to) - Date.parse(from)) / 1000).toFixed(1)} s`;
}
