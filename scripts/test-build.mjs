// The tests as JavaScript, for `npm test`.
//
// Through tsx, every module a test process or a server it starts loads goes through loader hooks
// on a thread of their own: a bundle of test files spent a tenth of its CPU there, a server ~0.8 s
// before it listened. So `npm test` first transpiles src/ and test/ with esbuild (the transform tsx
// uses; well under a second, types are `npm run typecheck`'s job) into a mirror of the checkout and
// runs the tests from there in plain node. In the mirror every other top-level entry of the
// checkout (package.json, console/, docs/, node_modules/, .cache/ …) is a link to the real one and
// each .ts file sits beside its .js, so a path a test or the app makes from `import.meta.url`
// reaches what it reaches in the checkout. Source maps point a failure back at the .ts line.
import { copyFileSync, mkdirSync, readdirSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { build } from 'esbuild';

/** Compiled in the mirror; everything else at the top of the checkout is linked. */
const COMPILED = ['src', 'test'];
/** Not linked: the repository itself. */
const SKIPPED = ['.git'];
/** Written by tests through the mirror: made in the checkout first, so the link to it holds. */
const WRITTEN = ['test-artifacts'];

/** Builds the mirror of `root` in `dir` (which must not exist yet). */
export async function buildTests(root, dir) {
  for (const name of WRITTEN) mkdirSync(join(root, name), { recursive: true });
  const sources = COMPILED.flatMap((top) =>
    readdirSync(join(root, top), { recursive: true })
      .filter((name) => name.endsWith('.ts'))
      .map((name) => join(root, top, name)),
  );
  await build({
    entryPoints: sources,
    outdir: dir,
    outbase: root,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: 'inline',
    logLevel: 'warning',
  });
  for (const source of sources) {
    const copy = join(dir, source.slice(root.length));
    mkdirSync(dirname(copy), { recursive: true });
    copyFileSync(source, copy);
  }
  for (const name of readdirSync(root)) {
    if (!COMPILED.includes(name) && !SKIPPED.includes(name)) symlinkSync(join(root, name), join(dir, name));
  }
}
