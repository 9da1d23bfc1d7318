import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The Node flags `npm start` gives Funil (package.json's start script): the tests and the benchmarks run it with them. */
export function npmStartFlags(root: string): string[] {
  const { scripts } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: { start: string } };
  const flags = /^node\s+(.*?)\s*dist\/server\.js$/.exec(scripts.start);
  if (!flags) throw new Error(`package.json's start script is not "node [flags] dist/server.js": ${scripts.start}`);
  return (flags[1] ?? '').split(/\s+/).filter(Boolean);
}
