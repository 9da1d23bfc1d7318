/**
 * Creates a lead (safely retryable) and lists the newest ones.
 *   FUNIL_URL=http://127.0.0.1:3000 FUNIL_TOKEN=fnl_... npx tsx clients/typescript/examples/create-and-list.ts
 */
import { randomUUID } from 'node:crypto';
import { createFunilClient } from '../src/index.js';

const url = process.env.FUNIL_URL ?? 'http://127.0.0.1:3000';
const token = process.env.FUNIL_TOKEN;
if (!token) {
  console.error('Set FUNIL_TOKEN to a token with the leads:read and leads:write scopes.');
  process.exit(1);
}

const funil = createFunilClient({ url, token, language: 'en' });

const created = await funil.POST('/leads', {
  params: { header: { 'idempotency-key': randomUUID() } },
  body: { name: 'Maria Silva', email: 'maria@example.com', source: 'example script', score: 40 },
});
if (created.error) {
  console.error(`could not create the lead: ${created.error.error} (${created.error.code})`);
  process.exit(1);
}
console.log(`created lead ${created.data._id} (status ${created.data.status})`);

const listed = await funil.GET('/leads', { params: { query: { limit: 5, sort: '-createdAt' } } });
if (listed.error) {
  console.error(`could not list leads: ${listed.error.error}`);
  process.exit(1);
}
for (const lead of listed.data) console.log(`${lead.createdAt}  ${lead._id}  ${lead.name}  ${lead.email ?? ''}`);
if (listed.response.headers.get('x-next-cursor')) console.log('(more pages: follow the Link header)');
