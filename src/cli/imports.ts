import { type Command, Option } from 'commander';
import { tenantContextOf } from './context.js';
import {
  count,
  details,
  errorPage,
  errorTable,
  FIRST_ERRORS,
  follow,
  type ImportState,
  importPath,
  type Phase,
  type RowError,
} from './import-api.js';
import { CliError, printJson, printLines } from './output.js';
import { progressOn } from './progress.js';

/** Rows per request when `imports errors` reads them all. */
const ERRORS_PAGE = 1000;

export function registerImportsCommands(imports: Command): void {
  imports
    .command('status')
    .description("show an import's progress and counts")
    .argument('<id>', 'id of the import')
    .action(async (id: string, _options: unknown, command: Command) => {
      const ctx = tenantContextOf(command);
      const state = await ctx.client.get<ImportState>(importPath(id));
      if (ctx.json) return printJson(state);
      printLines(details(state));
    });

  imports
    .command('errors')
    .description('list every row an import refused (or, with --phase revert, every record its revert left as it was)')
    .argument('<id>', 'id of the import')
    .addOption(new Option('--phase <phase>', 'import or revert').choices(['import', 'revert']).default('import'))
    .action(async (id: string, options: { phase: Phase }, command: Command) => {
      const ctx = tenantContextOf(command);
      let cursor: string | undefined;
      let total = 0;
      let first = true;
      // Page by page, never all in memory: an import may refuse a million rows.
      do {
        const page = await errorPage(ctx.client, id, options.phase, ERRORS_PAGE, cursor);
        if (ctx.json) writeJsonItems(page.errors, total, first, page.next === undefined);
        else if (page.errors.length > 0) printLines(errorTable(page.errors, options.phase, total === 0));
        total += page.errors.length;
        first = false;
        cursor = page.next;
      } while (cursor);
      if (!ctx.json && total === 0)
        printLines(options.phase === 'revert' ? 'The revert skipped no record.' : 'No row was refused.');
    });

  imports
    .command('cancel')
    .description('cancel an import under way: what it applied stays (revert takes it back)')
    .argument('<id>', 'id of the import')
    .action(async (id: string, _options: unknown, command: Command) => {
      const ctx = tenantContextOf(command);
      const state = await ctx.client.post<ImportState>(importPath(id, '/cancel'));
      if (ctx.json) return printJson(state);
      printLines(
        `Cancelled import ${state.id} after ${count(state.processed)} of ${count(state.total)} rows.`,
        state.created + state.updated > 0 ? `What it wrote stays: funil imports revert ${state.id} takes it back.` : '',
      );
    });

  imports
    .command('revert')
    .description(
      'take an import back: delete what it created, restore what it updated (records changed since are skipped)',
    )
    .argument('<id>', 'id of the import')
    .option('--no-wait', 'return once the revert has started')
    .action(async (id: string, options: { wait: boolean }, command: Command) => {
      const ctx = tenantContextOf(command);
      let state = await ctx.client.post<ImportState>(importPath(id, '/revert'));
      if (options.wait) {
        const progress = progressOn(ctx.json ? process.stderr : process.stdout, ctx.json);
        state = await follow(
          ctx.client,
          id,
          progress,
          (read) => read.revert?.status === 'succeeded',
          new AbortController().signal,
        );
        progress.end();
      }
      if (ctx.json) return printJson(state);
      const revert = state.revert;
      if (!revert) throw new CliError(`import ${id} shows no revert`);
      if (revert.status === 'running')
        return printLines(`Reverting import ${id}. Follow it with: funil imports status ${id}`);
      const lines = [
        `Reverted import ${id}: ${count(revert.deleted)} deleted, ${count(revert.restored)} restored, ${count(revert.skipped)} skipped.`,
      ];
      if (revert.skipped > 0) {
        const { errors } = await errorPage(ctx.client, id, 'revert', FIRST_ERRORS);
        lines.push('', 'Left as they are (changed since the import):', errorTable(errors, 'revert'));
        lines.push('', `See them all: funil imports errors ${id} --phase revert`);
      }
      printLines(...lines);
    });
}

/** One page of a JSON array written as it comes (`before` items already), so the whole is one JSON document. */
function writeJsonItems(items: readonly RowError[], before: number, first: boolean, last: boolean): void {
  let out = first ? '[' : '';
  items.forEach((item, index) => {
    out += `${before + index === 0 ? '\n' : ',\n'}  ${JSON.stringify(item)}`;
  });
  if (last) out += before + items.length === 0 ? ']\n' : '\n]\n';
  process.stdout.write(out);
}
