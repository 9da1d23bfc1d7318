import assert from 'node:assert/strict';
import { Agent } from 'node:http';
import { describe, it } from 'node:test';
import { send, sleep } from '../helpers/http-client.js';
import { printedToken } from '../helpers/server-process.js';
import { BACKENDS, skipUnless } from '../helpers/test-database.js';
import { storeServers } from './store-servers.js';

const LEADS = '/api/external/v1/leads';

for (const backend of BACKENDS) {
  describe(`kill -9 under concurrent writers (SPEC §11) [${backend}]`, {
    skip: skipUnless(backend),
    timeout: 90_000,
  }, () => {
    const servers = storeServers(backend);
    const start = () => servers.start();

    it('every lead answered 201 before the kill is there after a restart, and the restarted server serves', async (t) => {
      const first = await start();
      const token = printedToken(first.output());
      assert.ok(token);
      const auth = { authorization: `Bearer ${token}` };

      const agent = new Agent({ keepAlive: true, maxSockets: 8 });
      const acknowledged: string[] = [];
      const unexpected: string[] = [];
      let cutOff = 0;
      let running = true;
      const writer = async (w: number) => {
        for (let i = 0; running; i++) {
          try {
            const answer = await send(`${first.url}${LEADS}`, {
              method: 'POST',
              headers: { ...auth, 'idempotency-key': `crash-${w}-${i}` },
              json: { name: `Crash ${w}-${i}`, email: `c${w}.${i}@example.com`, score: i % 101 },
              agent,
            });
            if (answer.status === 201) acknowledged.push(answer.body._id);
            else unexpected.push(`${answer.status} ${JSON.stringify(answer.body)}`);
          } catch {
            // The process died with this request in flight: no answer, no promise made.
            cutOff++;
            if (first.child.exitCode !== null || first.child.signalCode !== null) return;
          }
        }
      };
      const writers = Array.from({ length: 8 }, (_, w) => writer(w));
      // Until enough writes were acknowledged, then at an arbitrary moment in the middle of the stream.
      for (let i = 0; acknowledged.length < 50 && i < 1_500; i++) await sleep(20);
      assert.ok(acknowledged.length >= 50, `only ${acknowledged.length} writes acknowledged in 30 s: ${unexpected[0]}`);
      await sleep(Math.random() * 300);
      first.child.kill('SIGKILL');
      await first.exited();
      running = false;
      await Promise.all(writers);
      agent.destroy();
      assert.deepEqual(unexpected, [], 'before the kill, every write was a 201');

      const restarted = await start();
      assert.equal(printedToken(restarted.output()), undefined, 'no new demo tenant');
      assert.equal((await send(`${restarted.url}/ready`)).status, 200);
      const stored = new Set<string>();
      let next: string | undefined = `${restarted.url}${LEADS}?limit=1000`;
      while (next) {
        const page = await send(next, { headers: auth });
        assert.equal(page.status, 200);
        for (const lead of page.body as Array<{ _id: string }>) stored.add(lead._id);
        const cursor = page.headers['x-next-cursor'];
        next = cursor ? `${restarted.url}${LEADS}?limit=1000&cursor=${encodeURIComponent(String(cursor))}` : undefined;
      }
      assert.deepEqual(
        acknowledged.filter((id) => !stored.has(id)),
        [],
        'every acknowledged lead survived the kill',
      );
      const after = await send(`${restarted.url}${LEADS}`, {
        method: 'POST',
        headers: auth,
        json: { name: 'After the crash', phone: '1' },
      });
      assert.equal(after.status, 201);

      t.diagnostic(
        `crash [${backend}]: ${acknowledged.length} leads acknowledged before kill -9, all ${acknowledged.length} present after restart ` +
          `(${stored.size} stored: ${stored.size - acknowledged.length} written but unanswered); ${cutOff} requests cut off`,
      );
    });
  });
}
