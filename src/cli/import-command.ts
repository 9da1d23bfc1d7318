import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { Readable } from 'node:stream';
import { type Command, Option } from 'commander';
import { tenantContextOf } from './context.js';
import { FORMATS, type Format, formatByName, MEDIA_TYPES } from './file-formats.js';
import {
  count,
  errorPage,
  errorTable,
  FIRST_ERRORS,
  follow,
  type ImportState,
  importPath,
  isOver,
  summary,
} from './import-api.js';
import { INTERRUPTED, Interrupt } from './interrupt.js';
import { CliError, printJson, printLines } from './output.js';
import { type Progress, progressOn, Rate } from './progress.js';
import { ApiError, type ServerClient } from './server-client.js';

interface ImportOptions {
  resource: 'lead' | 'customer';
  upsert?: 'email' | 'externalId';
  dryRun?: boolean;
  format?: Format;
  wait?: boolean;
}

export const IMPORT_EXIT_CODES = `Exit codes: 0 when the import succeeded, even if some rows were refused (the summary
lists them; --json has "failed"); 1 when it failed or was cancelled, on an error of the
server or the file, or a wrong usage; 130 after Ctrl-C (the import is cancelled on the server).`;

export function registerImportCommand(program: Command): void {
  program
    .command('import')
    .description('import leads or customers from a CSV or NDJSON file, with a tenant token, and follow it to its end')
    .argument('<file>', 'the file: .csv, or .ndjson/.jsonl (one JSON object a line)')
    .addOption(
      new Option('--resource <resource>', 'what the rows are').choices(['lead', 'customer']).makeOptionMandatory(),
    )
    .addOption(
      new Option(
        '--upsert <key>',
        'update the record with the same key instead of creating one (needs the read scope too)',
      ).choices(['email', 'externalId']),
    )
    .option('--dry-run', 'check every row and count what would happen, writing nothing')
    .addOption(new Option('--format <format>', 'the file format, when its extension does not say').choices(FORMATS))
    .option('--wait', 'follow the import until it is over, with its progress (default)')
    .option('--no-wait', 'print the import id and return once the file is uploaded')
    .addHelpText(
      'after',
      `\nProgress: a bar on a terminal; when stdout is a file or a pipe, a line when the import moves on and one
every 5 s. With --json, only the final import JSON goes to stdout.\n\n${IMPORT_EXIT_CODES}\n
Example:
  FUNIL_TOKEN=fnl_... funil import leads.csv --resource lead --upsert email`,
    )
    .action(async (file: string, options: ImportOptions, command: Command) => {
      const ctx = tenantContextOf(command);
      const format = options.format ?? formatOf(file);
      const size = await sizeOf(file);
      const progress = progressOn(ctx.json ? process.stderr : process.stdout, ctx.json);
      const interrupt = new Interrupt();
      try {
        const accepted = await upload(ctx.client, file, size, format, options, progress, interrupt.signal);
        if (options.wait === false) {
          if (ctx.json) return printJson(accepted);
          return printLines(
            `Import ${accepted.id} ${accepted.status}. Follow it with: funil imports status ${accepted.id}`,
          );
        }
        let state = await follow(ctx.client, accepted.id, progress, isOver, interrupt.signal);
        progress.end();
        if (interrupt.signal.aborted && !isOver(state)) state = await cancel(ctx.client, state);
        await report(ctx.client, state, ctx.json);
        if (interrupt.signal.aborted) {
          throw new CliError(`interrupted: import ${state.id} ${state.status}${revertHint(state)}`, INTERRUPTED);
        }
        if (state.status !== 'succeeded') throw new CliError(`import ${state.id} ${state.status}${revertHint(state)}`);
      } finally {
        progress.end();
        interrupt.stop();
      }
    });
}

/** Streams the file to `POST /imports`, as it is read from the disk, with the upload's progress. */
async function upload(
  client: ServerClient,
  file: string,
  size: number,
  format: Format,
  options: ImportOptions,
  progress: Progress,
  signal: AbortSignal,
): Promise<{ id: string; status: string }> {
  const query = new URLSearchParams({ resource: options.resource });
  if (options.upsert) query.set('upsert', options.upsert);
  if (options.dryRun) query.set('dryRun', 'true');
  const rate = new Rate();
  let sent = 0;
  const show = () => progress.show({ label: 'uploading', done: sent, total: size, unit: 'bytes', rate: rate.of(sent) });
  async function* counted(source: AsyncIterable<Buffer>) {
    for await (const chunk of source) {
      sent += chunk.length;
      show();
      yield chunk;
    }
  }
  try {
    const answer = await client.call<{ id: string; status: string }>('POST', `/imports?${query}`, {
      upload: { stream: Readable.from(counted(createReadStream(file))), contentType: MEDIA_TYPES[format] },
      signal,
    });
    return answer.body;
  } catch (error) {
    if (signal.aborted) throw new CliError('interrupted: the upload was stopped, nothing was imported', INTERRUPTED);
    throw error;
  }
}

/** Asks the server to cancel the import (Ctrl-C); it may have ended meanwhile (409). */
async function cancel(client: ServerClient, state: ImportState): Promise<ImportState> {
  process.stderr.write(`funil: Ctrl-C: cancelling import ${state.id} on the server (Ctrl-C again to quit at once)\n`);
  try {
    return await client.post<ImportState>(importPath(state.id, '/cancel'));
  } catch (error) {
    if (error instanceof ApiError && error.status === 409) return client.get<ImportState>(importPath(state.id));
    throw error;
  }
}

/** The summary and the first refused rows; with --json, the import as the API gives it. */
async function report(client: ServerClient, state: ImportState, json: boolean): Promise<void> {
  if (json) return printJson(state);
  const lines = [summary(state)];
  if (state.failed > 0) {
    const { errors } = await errorPage(client, state.id, 'import', FIRST_ERRORS);
    const first =
      state.failed > errors.length ? `first ${errors.length} of ${count(state.failed)}` : count(state.failed);
    lines.push('', `Rows refused (${first}):`, errorTable(errors, 'import'));
    lines.push('', `See them all: funil imports errors ${state.id}`);
  }
  printLines(...lines);
}

function revertHint(state: ImportState): string {
  const applied = state.created + state.updated;
  if (state.dryRun || applied === 0) return '';
  return `; ${applied} record(s) were written, funil imports revert ${state.id} takes them back`;
}

function formatOf(file: string): Format {
  const format = formatByName(file);
  if (!format) {
    throw new CliError(
      `cannot tell the format of ${basename(file)} from its name: pass --format csv or --format ndjson`,
    );
  }
  return format;
}

async function sizeOf(file: string): Promise<number> {
  try {
    const found = await stat(file);
    if (!found.isFile()) throw new CliError(`cannot import ${file}: not a file`);
    return found.size;
  } catch (error) {
    if (error instanceof CliError) throw error;
    const code = (error as { code?: unknown }).code;
    if (code === 'ENOENT') throw new CliError(`cannot read ${file}: no such file`);
    throw new CliError(`cannot read ${file}: ${typeof code === 'string' ? code : String(error)}`);
  }
}
