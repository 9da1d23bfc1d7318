import { fileURLToPath } from 'node:url';

/**
 * `node`'s arguments to run the module at `url`: TypeScript through tsx, JavaScript as it is. Under
 * `npm test` the tests run from their JavaScript build (scripts/test-build.mjs), and so do the
 * processes they start; run from the source (`node --import tsx --test …`), through tsx.
 */
export function moduleArgs(url: URL): string[] {
  const path = fileURLToPath(url);
  return path.endsWith('.ts') ? ['--import', 'tsx', path] : [path];
}

/** This file's extension: `.ts` from the source, `.js` from the tests' build. */
const OWN_EXTENSION = import.meta.url.slice(import.meta.url.lastIndexOf('.'));

/** `node`'s arguments to run src/server of the tree these tests run from. */
export const SERVER_ARGS = moduleArgs(new URL(`../../src/server${OWN_EXTENSION}`, import.meta.url));
