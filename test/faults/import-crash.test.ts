import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { send, sleep } from '../helpers/http-client.js';
import { printedToken } from '../helpers/server-process.js';
import { BACKENDS, skipUnless } from '../helpers/test-database.js';
import { storeServers } from './store-servers.js';

const API = '/api/external/v1';
const ROWS = 20_000;

/** A CSV of ROWS leads, each with an e-mail of its own: a row applied twice would make two leads of one e-mail. */
function csv(): string {
  const lines = ['name,email,source'];
  for (let i = 1; i <= ROWS; i++) lines.push(`Row ${i},row${i}@crash.example,crash-import`);
  return `${lines.join('\n')}\n`;
}

for (const backend of BACKENDS) {
  describe(`kill -9 during an import (SPEC §23) [${backend}]`, { skip: skipUnless(backend), timeout: 180_000 }, () => {
    const servers = storeServers(backend);
    const start = () => servers.start();

    it('after a restart the import finishes with every row applied exactly once', async (t) => {
      const first = await start();
      const token = printedToken(first.output());
      assert.ok(token);
      const auth = { authorization: `Bearer ${token}` };
      const uploaded = await fetch(`${first.url}${API}/imports?resource=lead`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'text/csv' },
        body: csv(),
      });
      assert.equal(uploaded.status, 202, await uploaded.clone().text());
      const { id } = (await uploaded.json()) as { id: string };
      const progress = async (url: string) => (await send(`${url}${API}/imports/${id}`, { headers: auth })).body;
      // Killed somewhere in the middle: some rows applied, most not.
      let before = await progress(first.url);
      for (let i = 0; before.processed < ROWS / 10 && i < 600; i++) {
        await sleep(50);
        before = await progress(first.url);
      }
      assert.ok(before.processed > 0 && before.processed < ROWS, `processed ${before.processed} before the kill`);
      await sleep(Math.random() * 200);
      first.child.kill('SIGKILL');
      await first.exited();

      const restarted = await start();
      let done = await progress(restarted.url);
      for (let i = 0; !['succeeded', 'failed'].includes(done.status) && i < 1_200; i++) {
        await sleep(100);
        done = await progress(restarted.url);
      }
      assert.deepEqual(
        {
          status: done.status,
          total: done.total,
          processed: done.processed,
          created: done.created,
          failed: done.failed,
        },
        { status: 'succeeded', total: ROWS, processed: ROWS, created: ROWS, failed: 0 },
      );
      await restarted.stop(5_000);
      const leads = (await servers.leads()).filter((lead) => lead.name.startsWith('Row '));
      assert.equal(leads.length, ROWS, 'no row applied twice, none skipped');
      assert.equal(new Set(leads.map((lead) => lead.name)).size, ROWS);
      t.diagnostic(
        `import crash [${backend}]: killed at ${before.processed} of ${ROWS} rows; after the restart ${leads.length} leads, one per row`,
      );
    });
  });
}
