import type { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import type { Format } from './file-formats.js';
import { CliError } from './output.js';
import { pollUntil } from './poll.js';
import { type Progress, Rate } from './progress.js';
import type { ServerClient } from './server-client.js';

/** An export as `GET /exports/:id` returns it (SPEC §23). */
export interface ExportState {
  id: string;
  resource: 'lead' | 'customer';
  format: Format;
  status: 'queued' | 'running' | 'succeeded' | 'failed' | 'expired';
  total: number | null;
  processed: number;
  startedAt: string | null;
  finishedAt: string | null;
  expiresAt: string | null;
  fileBytes: number | null;
}

/** What `POST /exports` takes. */
export interface ExportRequest {
  resource: ExportState['resource'];
  format: Format;
  query?: Record<string, string>;
  fields?: string[];
}

export const exportPath = (id: string, rest = '') => `/exports/${encodeURIComponent(id)}${rest}`;

const isOver = (state: ExportState) => state.status !== 'queued' && state.status !== 'running';

/**
 * `status=new&status=won&custom.plan=pro&sort=-createdAt` as the export's `query`: a URL query
 * string, decoded as the list's own (`+` is a space, `%2B` a plus); a name given twice becomes one
 * comma-separated value (`status: 'new,won'`), the way GET /leads takes several values of a filter.
 */
export function queryOf(text: string): Record<string, string> | undefined {
  const values = new Map<string, string>();
  for (const [name, value] of new URLSearchParams(text)) {
    const before = values.get(name);
    values.set(name, before === undefined ? value : `${before},${value}`);
  }
  return values.size > 0 ? Object.fromEntries(values) : undefined;
}

/** `name, email,custom.plan` → ['name', 'email', 'custom.plan']. */
export function fieldsOf(text: string): string[] {
  const fields = text
    .split(',')
    .map((field) => field.trim())
    .filter((field) => field !== '');
  if (fields.length === 0) throw new CliError('--fields names no field: e.g. --fields name,email,custom.plan');
  return fields;
}

/** Reads the export until it is over (or Ctrl-C), showing the rows written so far. */
export function follow(
  client: ServerClient,
  id: string,
  progress: Progress,
  signal: AbortSignal,
): Promise<ExportState> {
  const rate = new Rate();
  const show = (state: ExportState) =>
    progress.show({
      label: state.status,
      done: state.processed,
      total: state.total ?? undefined,
      unit: 'rows',
      rate: state.status === 'running' ? rate.of(state.processed) : undefined,
    });
  return pollUntil(() => client.get<ExportState>(exportPath(id)), show, isOver, signal);
}

/**
 * Streams the export's file into `destination`, asked for gzipped and unzipped as it arrives, at
 * the pace `destination` takes it (pipeline's backpressure): never the whole file in memory.
 * `end: false` leaves `destination` open (stdout is still needed after it); a file is ended and
 * flushed before this returns. Answers the bytes written.
 */
export async function download(
  client: ServerClient,
  state: ExportState,
  destination: { stream: Writable; end: boolean },
  progress: Progress,
  signal: AbortSignal,
): Promise<number> {
  const body = await client.download(exportPath(state.id, '/file'), signal);
  const rate = new Rate();
  let written = 0;
  const total = state.fileBytes ?? undefined;
  async function* counted(source: AsyncIterable<Buffer>) {
    for await (const chunk of source) {
      written += chunk.length;
      progress.show({ label: 'downloading', done: written, total, unit: 'bytes', rate: rate.of(written) });
      yield chunk;
    }
  }
  const { stream, end } = destination;
  try {
    if (body.headers['content-encoding']?.toLowerCase() === 'gzip') {
      await pipeline(body, createGunzip(), counted, stream, { signal, end });
    } else {
      await pipeline(body, counted, stream, { signal, end });
    }
  } catch (error) {
    if (signal.aborted) throw error;
    throw new CliError(`the download of export ${state.id} was cut short: ${reasonOf(error)}`);
  }
  return written;
}

function reasonOf(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  return error instanceof Error ? error.message : String(error);
}
