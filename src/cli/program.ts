import { readFileSync } from 'node:fs';
import { Command, Option } from 'commander';
import { registerExportCommand } from './export-command.js';
import { registerImportCommand } from './import-command.js';
import { registerImportsCommands } from './imports.js';
import { oneLine } from './output.js';
import { registerTenantCommands } from './tenants.js';
import { registerTokenCommands } from './tokens.js';

export const DEFAULT_URL = 'http://127.0.0.1:3000';

export function buildProgram(): Command {
  const program = new Command('funil')
    .description(
      'Manage the tenants and tokens of a Funil server through its admin API (admin token), and import or export ' +
        "a tenant's leads and customers through its API (the tenant's token).",
    )
    .version(packageVersion(), '-V, --version', 'print the version')
    .helpOption('-h, --help', 'print help')
    .addOption(new Option('--url <url>', 'address of the Funil server').env('FUNIL_URL').default(DEFAULT_URL))
    .addOption(
      new Option('--admin-token <token>', 'admin token (prefer the env variable: arguments are visible in ps)').env(
        'FUNIL_ADMIN_TOKEN',
      ),
    )
    .addOption(
      new Option(
        '--token <token>',
        'tenant token, for import, imports and export (prefer the env variable: arguments are visible in ps)',
      ).env('FUNIL_TOKEN'),
    )
    .option('--json', "print the API's JSON answer, for scripts")
    .configureOutput({
      // Commander's usage errors, like ours, are one line: `funil: unknown option '--x'`.
      outputError: (message, write) => write(`funil: ${oneLine(message.replace(/^error: /, ''))}\n`),
    })
    .showHelpAfterError(false);
  program.helpCommand('help [command]', 'print help for a command');

  registerTenantCommands(program.command('tenants').description('create, list, rename, disable and enable tenants'));
  registerTokenCommands(program.command('tokens').description('create, list and revoke API tokens of a tenant'));
  registerImportCommand(program);
  registerExportCommand(program);
  registerImportsCommands(
    program
      .command('imports')
      .description('follow, list the errors of, cancel or revert an import started by `funil import`')
      .addHelpText('after', '\nExit codes: 0 on success; 1 on an error of the server or a wrong usage.'),
  );
  program.addHelpText(
    'after',
    '\nImports: `funil import FILE` uploads a file and follows it; `funil imports status|errors|cancel|revert ID` ' +
      'acts on an import afterwards.\nExports: `funil export --resource lead > leads.csv` writes a file of a ' +
      "tenant's leads or customers.",
  );
  return program;
}

function packageVersion(): string {
  // src/cli/ and dist/cli/ both sit two levels below package.json.
  const text = readFileSync(new URL('../../package.json', import.meta.url), 'utf8');
  return (JSON.parse(text) as { version: string }).version;
}
