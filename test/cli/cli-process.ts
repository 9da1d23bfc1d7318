import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { copyFile, mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FROM_BUILD } from '../helpers/module-args.js';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a process to its end and collects what it wrote. */
export async function run(command: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs = 20_000): Promise<Run> {
  const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stdout, stderr };
}

/** The environment of the test process without anything that would point the CLI or server elsewhere. */
export function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of ['FUNIL_URL', 'FUNIL_ADMIN_TOKEN', 'FUNIL_TOKEN', 'DATABASE_URL', 'NODE_OPTIONS'])
    delete env[name];
  return { ...env, ...extra };
}

/**
 * The CLI's entry as JavaScript, so that each CLI run starts in plain node (~10x faster than
 * through tsx), which keeps a CLI test file well under a minute. Under `npm test` the tests' build
 * holds it already; run from the source, this compiles src/cli/ to the JavaScript `npm run build`
 * emits (ES modules, ES2022) into `dir`, a temp package that links the real node_modules.
 * Type-checking is `npm run typecheck`'s job: this is transpiling only.
 */
export async function buildCli(dir: string): Promise<string> {
  if (FROM_BUILD) return fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
  const { default: ts } = await import('typescript');
  const source = join(ROOT, 'src', 'cli');
  const out = join(dir, 'dist', 'cli');
  await mkdir(out, { recursive: true });
  await copyFile(join(ROOT, 'package.json'), join(dir, 'package.json'));
  await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  const compilerOptions = { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022 };
  for (const file of (await readdir(source)).filter((name) => name.endsWith('.ts'))) {
    const { outputText } = ts.transpileModule(await readFile(join(source, file), 'utf8'), { compilerOptions });
    await writeFile(join(out, file.replace(/\.ts$/, '.js')), outputText);
  }
  return join(out, 'main.js');
}

/**
 * Runs a process and presses Ctrl-C (SIGINT) once `ready` matches what it wrote so far to `stream`;
 * resolves with everything it wrote and its exit code.
 */
export async function interruptWhen(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  stream: 'stdout' | 'stderr',
  ready: RegExp,
): Promise<Run> {
  const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const output = { stdout: '', stderr: '' };
  const closed = once(child, 'close');
  await new Promise<void>((resolve) => {
    for (const name of ['stdout', 'stderr'] as const) {
      child[name].setEncoding('utf8').on('data', (chunk: string) => {
        output[name] += chunk;
        if (name === stream && ready.test(output[name])) resolve();
      });
    }
  });
  child.kill('SIGINT');
  const [code] = (await closed) as [number | null];
  return { code, ...output };
}
