import { randomBytes } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Writable } from 'node:stream';
import { type Command, Option } from 'commander';
import { tenantContextOf } from './context.js';
import { download, type ExportRequest, type ExportState, fieldsOf, follow, queryOf } from './export-api.js';
import { FORMATS, type Format, formatByName } from './file-formats.js';
import { count } from './import-api.js';
import { INTERRUPTED, Interrupt } from './interrupt.js';
import { CliError, printJson } from './output.js';
import { type Progress, progressOn } from './progress.js';

interface ExportOptions {
  resource: ExportRequest['resource'];
  format?: Format;
  query?: string;
  fields?: string;
  output?: string;
}

/** Where the file goes: stdout as it arrives, or --output through a temp file renamed at the end. */
interface Destination {
  stream: Writable;
  /** Whether the download ends the stream (a file) or leaves it open (stdout). */
  end: boolean;
  /** Puts the finished file in its place. */
  commit(): Promise<void>;
  /** Leaves nothing behind: the temp file is deleted. */
  discard(): Promise<void>;
}

const NO_PROGRESS: Progress = { show: () => {}, end: () => {} };

export function registerExportCommand(program: Command): void {
  program
    .command('export')
    .description('export leads or customers to a CSV or NDJSON file, with a tenant token, from one snapshot')
    .addOption(
      new Option('--resource <resource>', 'what to export').choices(['lead', 'customer']).makeOptionMandatory(),
    )
    .addOption(
      new Option('--format <format>', "the file's format (default: by --output's extension, else csv)").choices(
        FORMATS,
      ),
    )
    .option(
      '--query <query>',
      "the list's filters and sort as in GET /leads' query string, e.g. 'status=new&custom.plan=pro&sort=-createdAt' " +
        '(a name given twice is one comma-separated value: status=new&status=won is status=new,won)',
    )
    .option('--fields <fields>', 'the fields, comma-separated, in this order, e.g. name,email,custom.plan')
    .option('-o, --output <file>', 'write the file there (complete, or not at all) instead of to stdout')
    .addHelpText(
      'after',
      `
The file goes to stdout as it arrives (gzipped on the wire, never whole in memory), or to --output:
written to a temp file beside it and renamed once complete, so an error or Ctrl-C leaves none.
Progress (rows written by the server, then bytes downloaded) and the closing line go to stderr: a
bar on a terminal, plain lines otherwise. --json prints the final export object on stdout instead
of the closing line, so it needs --output for the file (and prints no progress off a terminal).

Exit codes: 0 when the file is complete; 1 when the export failed, on an error of the server
(a 403 without the read scope, a 400 naming query.<parameter> or fields.<index>) or a wrong usage,
with nothing on stdout; 130 after Ctrl-C (the export still finishes on the server).

Examples:
  FUNIL_TOKEN=fnl_... funil export --resource customer --format csv > customers.csv
  funil export --resource lead --query 'status=new&custom.plan=pro&sort=-createdAt' \\
    --fields name,email,custom.plan --output leads.csv`,
    )
    .action(async (options: ExportOptions, command: Command) => {
      const ctx = tenantContextOf(command);
      if (ctx.json && options.output === undefined) {
        throw new CliError('--json prints the export on stdout: pass --output FILE for the file');
      }
      const request = requestOf(options);
      const destination = options.output ? await toFile(options.output) : toStdout();
      const progress = progressOn(process.stderr, ctx.json);
      const interrupt = new Interrupt();
      let state: ExportState | undefined;
      try {
        const { id } = await ctx.client
          .call<{ id: string }>('POST', '/exports', { body: request, signal: interrupt.signal })
          .then((answer) => answer.body);
        state = await follow(ctx.client, id, progress, interrupt.signal);
        progress.end();
        if (interrupt.signal.aborted) throw interrupted(state, options.output);
        if (state.status !== 'succeeded') throw new CliError(`export ${state.id} ${state.status}`);
        // A bar on the terminal that shows the file itself would be drawn over its lines.
        const shown = options.output === undefined && process.stdout.isTTY ? NO_PROGRESS : progress;
        const bytes = await download(ctx.client, state, destination, shown, interrupt.signal);
        shown.end();
        await destination.commit();
        if (ctx.json) return printJson(state);
        process.stderr.write(`${closingLine(state, bytes, options.output)}\n`);
      } catch (error) {
        progress.end();
        await destination.discard();
        if (interrupt.signal.aborted) throw interrupted(state, options.output);
        throw error;
      } finally {
        interrupt.stop();
      }
    });
}

function requestOf(options: ExportOptions): ExportRequest {
  const format = options.format ?? (options.output ? formatByName(options.output) : undefined) ?? 'csv';
  const query = options.query === undefined ? undefined : queryOf(options.query);
  return {
    resource: options.resource,
    format,
    ...(query && { query }),
    ...(options.fields !== undefined && { fields: fieldsOf(options.fields) }),
  };
}

function toStdout(): Destination {
  return { stream: process.stdout, end: false, commit: async () => {}, discard: async () => {} };
}

/** A temp file beside `path` (so the rename is atomic), made before the export is asked for. */
async function toFile(path: string): Promise<Destination> {
  const temp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.part`);
  const handle = await open(temp, 'wx').catch((error: unknown) => {
    const code = (error as { code?: unknown }).code;
    throw new CliError(`cannot write ${path}: ${typeof code === 'string' ? code : String(error)}`);
  });
  const stream = handle.createWriteStream();
  return {
    stream,
    end: true,
    commit: () => rename(temp, path),
    discard: async () => {
      stream.destroy();
      await rm(temp, { force: true });
    },
  };
}

function interrupted(state: ExportState | undefined, output: string | undefined): CliError {
  const what = state ? `export ${state.id} goes on on the server` : 'before the export was accepted';
  const file = output ? `${output} was not written` : 'stdout holds part of the file at most';
  return new CliError(`interrupted: ${what}; ${file}`, INTERRUPTED);
}

/** `Exported 1,204 leads (182.3 kB) to leads.csv.` */
function closingLine(state: ExportState, bytes: number, output: string | undefined): string {
  const rows = `${count(state.total ?? state.processed)} ${state.resource}s`;
  return `Exported ${rows} (${count(bytes)} bytes)${output ? ` to ${output}` : ''}.`;
}
