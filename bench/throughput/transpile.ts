/**
 * The reference and the HTTP ceiling run as plain JavaScript, as Funil's dist/ does: no TypeScript
 * loader in their process (it would add memory and start-up work that Funil does not carry).
 * They are transpiled into node_modules/.cache, where their imports still resolve; an import of
 * Funil's own code (`../../src/…`) is of its build (`dist/`), which the bench makes first.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';

const SOURCES = ['bench/reference/queries.ts', 'bench/reference/server.ts', 'bench/ceiling/http-server.ts'];

/** Transpiles the helper servers; returns the directory that holds server.js and http-server.js. */
export async function transpileHelpers(root: string): Promise<string> {
  const out = join(root, 'node_modules', '.cache', 'funil-bench');
  await mkdir(out, { recursive: true });
  for (const source of SOURCES) {
    const { outputText } = ts.transpileModule(await readFile(join(root, source), 'utf8'), {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
      fileName: source,
    });
    const built = outputText.replaceAll(/(["'])\.\.\/\.\.\/src\//g, `$1${pathToFileURL(join(root, 'dist'))}/`);
    await writeFile(join(out, basename(source).replace(/\.ts$/, '.js')), built);
  }
  await writeFile(join(out, 'package.json'), '{ "type": "module" }\n');
  return out;
}
