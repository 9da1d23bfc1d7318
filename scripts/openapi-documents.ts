/**
 * Writes the OpenAPI documents Funil serves (the external API's and the admin API's) into a
 * directory, as `external.json` and `admin.json`, for tools that read them from files.
 *   npx tsx scripts/openapi-documents.ts <directory>
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ADMIN_PREFIX, EXTERNAL_PREFIX } from '../src/app.js';
import { documentApp } from './document-app.js';

const directory = process.argv[2];
if (!directory) {
  process.stderr.write('usage: npx tsx scripts/openapi-documents.ts <directory>\n');
  process.exit(2);
}
// The admin API (and so its document) is served only when an admin token is set.
const app = await documentApp({ FUNIL_ADMIN_TOKEN: 'documents-only-'.padEnd(40, 'x') });
try {
  await mkdir(directory, { recursive: true });
  for (const [name, prefix] of [
    ['external', EXTERNAL_PREFIX],
    ['admin', ADMIN_PREFIX],
  ] as const) {
    const response = await app.inject({ method: 'GET', url: `${prefix}/openapi.json` });
    if (response.statusCode !== 200) throw new Error(`${prefix}/openapi.json answered ${response.statusCode}`);
    await writeFile(join(directory, `${name}.json`), `${JSON.stringify(response.json(), null, 2)}\n`);
  }
} finally {
  await app.close();
}
