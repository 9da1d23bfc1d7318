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

/** Whether the tests run from their JavaScript build (scripts/test-build.mjs), not from the source. */
export const FROM_BUILD = import.meta.url.endsWith('.js');

/** `node`'s arguments to run src/server of the tree these tests run from. */
export const SERVER_ARGS = moduleArgs(new URL(`../../src/server${FROM_BUILD ? '.js' : '.ts'}`, import.meta.url));
