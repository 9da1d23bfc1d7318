/**
 * Ordinary integrations, as they really call Funil: one token, several requests at once over
 * kept-alive connections, with the production defaults of fair share (SPEC §10: a tenant's share,
 * its line of 256, a wait of at most 1 s). Only the per-token rate limit is raised, so that a
 * suite may send more than 1,200 requests a minute; and the event-loop shedding is off, as in
 * every suite, because two test files share two cores (it has tests of its own).
 *
 * None of these may meet a 429 or a 503: parallelism is normal use, not abuse.
 */
import assert from 'node:assert/strict';
import { Agent } from 'node:http';
import { after, before, it } from 'node:test';
import { feedSettled } from '../helpers/feed.js';
import { type HttpAnswer, send } from '../helpers/http-client.js';
import { API, describeEachBackend, type TestTenant } from '../helpers/test-app.js';

const STATUSES = ['new', 'contacted', 'qualified', 'proposal', 'negotiation'];

describeEachBackend(
  'parallel clients of one tenant are served, never refused (SPEC §10)',
  (ctx) => {
    let base: string;
    let tenant: TestTenant;
    const agent = new Agent({ keepAlive: true, maxSockets: 64 });
    before(async () => {
      base = `${await ctx.app.listen({ host: '127.0.0.1', port: 0 })}${API}`;
      tenant = await ctx.tenant('Integration');
    });
    after(() => agent.destroy());

    const call = (method: string, path: string, json?: unknown, headers: Record<string, string> = {}) =>
      send(`${base}${path}`, {
        method,
        json,
        agent,
        headers: { authorization: `Bearer ${tenant.token}`, ...headers },
        timeoutMs: 30_000,
      });
    const summary = (answers: HttpAnswer[]) => {
      const counts = new Map<number, number>();
      for (const answer of answers) counts.set(answer.status, (counts.get(answer.status) ?? 0) + 1);
      return JSON.stringify(Object.fromEntries([...counts].sort()));
    };
    const refusals = (answers: HttpAnswer[]) =>
      answers.filter((a) => a.status === 429 || a.status === 503).map((a) => `${a.status} ${a.body?.error}`);

    for (const clients of [8, 16, 32]) {
      it(`serves ${clients} concurrent clients mixing creates, reads, updates, status changes and list pages of 100 with only 2xx`, async (t) => {
        const until = performance.now() + 1_500;
        const answers: HttpAnswer[] = [];
        await Promise.all(
          Array.from({ length: clients }, async (_, client) => {
            const created = await call('POST', '/leads', { name: `Client ${client}`, email: `c${client}@example.com` });
            answers.push(created);
            const id = created.body._id as string;
            for (let i = 0; performance.now() < until; i++) {
              const step = (client + i) % 5;
              answers.push(
                step === 0
                  ? await call('POST', '/leads', { name: `Client ${client} lead ${i}`, phone: `+55 11 9${i}` })
                  : step === 1
                    ? await call('GET', `/leads/${id}`)
                    : step === 2
                      ? await call('PUT', `/leads/${id}`, { score: i % 101 })
                      : step === 3
                        ? await call('PUT', `/leads/${id}/status`, { status: STATUSES[i % STATUSES.length] })
                        : await call('GET', '/leads?limit=100'),
              );
            }
          }),
        );
        t.diagnostic(`${answers.length} answers: ${summary(answers)}`);
        assert.deepEqual(
          answers.filter((a) => a.status < 200 || a.status > 299).map((a) => `${a.status} ${a.body?.error}`),
          [],
        );
      });
    }

    it('creates one record from 30 concurrent upserts of one new key, all 200 or 201', async () => {
      const answers = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          call('POST', '/leads?upsert=email', { name: `Upsert ${i}`, email: 'one-key@example.com' }),
        ),
      );
      assert.deepEqual(refusals(answers), []);
      assert.equal(answers.filter((a) => a.status === 201).length, 1, summary(answers));
      assert.equal(answers.filter((a) => a.status === 200).length, 29, summary(answers));
      assert.equal(new Set(answers.map((a) => a.body._id)).size, 1);
    });

    it('creates one lead from 20 parallel POSTs with one Idempotency-Key', async () => {
      const answers = await Promise.all(
        Array.from({ length: 20 }, () =>
          call('POST', '/leads', { name: 'Once only', phone: '1' }, { 'idempotency-key': 'parallel-clients-once' }),
        ),
      );
      assert.deepEqual(refusals(answers), []);
      // The first creates; a copy that arrives while it runs is told so (409), one after it is replayed.
      assert.ok(
        answers.every((a) => a.status === 201 || a.status === 409),
        summary(answers),
      );
      const ids = new Set(answers.filter((a) => a.status === 201).map((a) => a.body._id));
      assert.equal(ids.size, 1);
      const stored = await ctx.db.selectFrom('leads').select('id').where('name', '=', 'Once only').execute();
      assert.equal(stored.length, 1);
    });

    it('answers 10 parallel PUTs with one If-Match: one 200, nine 412', async () => {
      const lead = await call('POST', '/leads', { name: 'Contended', phone: '1' });
      const etag = String(lead.headers.etag);
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          call('PUT', `/leads/${lead.body._id}`, { score: i + 1 }, { 'if-match': etag }),
        ),
      );
      assert.deepEqual(refusals(answers), []);
      assert.deepEqual(answers.map((a) => a.status).sort(), [200, 412, 412, 412, 412, 412, 412, 412, 412, 412]);
    });

    it('makes one customer from 10 concurrent conversions of one lead', async () => {
      const lead = await call('POST', '/leads', { name: 'Converted once', email: 'converted-once@example.com' });
      const answers = await Promise.all(
        Array.from({ length: 10 }, () => call('POST', `/leads/${lead.body._id}/convert`, {})),
      );
      assert.deepEqual(refusals(answers), []);
      assert.ok(
        answers.every((a) => a.status === 200 || a.status === 201),
        summary(answers),
      );
      assert.equal(new Set(answers.map((a) => a.body.customer._id)).size, 1);
      const customers = await call('GET', '/customers?email=converted-once@example.com');
      assert.equal(customers.body.length, 1);
    });

    it('answers four concurrent batches of 100 items, all 200 with every item created', async () => {
      const answers = await Promise.all(
        Array.from({ length: 4 }, (_, batch) =>
          call('POST', '/leads/batch', {
            items: Array.from({ length: 100 }, (_, i) => ({
              name: `Batch ${batch} item ${i}`,
              email: `batch${batch}.${i}@example.com`,
            })),
          }),
        ),
      );
      assert.deepEqual(
        answers.map((a) => a.status),
        [200, 200, 200, 200],
      );
      for (const answer of answers) {
        assert.deepEqual(new Set(answer.body.results.map((r: { status: number }) => r.status)), new Set([201]));
      }
    });

    it('serves 16 concurrent writers on both resources while a reader follows the feed, which sees every event once', async () => {
      // Where the feed stands now, once the earlier tests' events are all shown (on a shared server
      // another database's open transaction holds the feed back a moment): the reader follows from there.
      await feedSettled(ctx.db, tenant.id);
      let after: string | undefined;
      for (;;) {
        const page = await call('GET', `/events?limit=1000${after ? `&after=${after}` : ''}`);
        if (page.body.length > 0) after = page.body.at(-1).id;
        if (page.headers['x-next-cursor'] === undefined) break;
      }
      const seen: string[] = [];
      const writes: HttpAnswer[] = [];
      let writing = true;
      const follow = async () => {
        const deadline = () => !writing && (seen.length >= writes.length || performance.now() > givingUpAt);
        let givingUpAt = Number.POSITIVE_INFINITY;
        for (;;) {
          const page = await call('GET', `/events?limit=200${after ? `&after=${after}` : ''}`);
          assert.equal(page.status, 200);
          for (const event of page.body as { id: string }[]) seen.push(event.id);
          if (page.body.length > 0) {
            after = page.body.at(-1).id;
            continue;
          }
          if (!writing && givingUpAt === Number.POSITIVE_INFINITY) givingUpAt = performance.now() + 5_000;
          if (deadline()) return;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      };
      const reader = follow();
      await Promise.all(
        Array.from({ length: 16 }, async (_, writer) => {
          for (let round = 0; round < 4; round++) {
            const lead = await call('POST', '/leads', { name: `W${writer} r${round}`, phone: '1' });
            const customer = await call('POST', '/customers', {
              name: `W${writer} r${round}`,
              email: `w${writer}.r${round}@example.com`,
            });
            writes.push(lead, customer);
            writes.push(await call('PUT', `/leads/${lead.body._id}`, { score: writer + round + 1 }));
            writes.push(await call('PUT', `/leads/${lead.body._id}/status`, { status: 'contacted' }));
            writes.push(await call('PUT', `/customers/${customer.body._id}`, { notes: `round ${round}` }));
            writes.push(await call('PUT', `/customers/${customer.body._id}/status`, { status: 'inactive' }));
            writes.push(await call('DELETE', `/leads/${lead.body._id}`));
            writes.push(await call('DELETE', `/customers/${customer.body._id}`));
          }
        }),
      );
      writing = false;
      await reader;
      assert.deepEqual(
        writes.filter((a) => a.status < 200 || a.status > 299).map((a) => `${a.status} ${a.body?.error}`),
        [],
      );
      assert.equal(new Set(seen).size, seen.length, 'no event seen twice');
      assert.equal(seen.length, writes.length, 'one event per write, every one seen');
    });
  },
  { FUNIL_DB_CONNECT_TIMEOUT_MS: '1000' },
);
