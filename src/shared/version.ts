import { readFileSync } from 'node:fs';

/** Funil's version, from its package.json (src/shared/ and dist/shared/ both sit two levels below it). */
export const PACKAGE_VERSION: string = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
