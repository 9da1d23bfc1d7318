import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { type CompiledQuery, sql } from 'kysely';
import { EventRepository } from '../../src/events/event.repository.js';
import { ALL_EVENT_TYPES } from '../../src/events/event.service.js';
import { feedSettled } from '../helpers/feed.js';
import { nodeTypes, type PlanNode } from '../helpers/query-plan.js';
import { RecordQueries } from '../helpers/record-queries.js';
import { API, describeEachBackend, type TestTenant } from '../helpers/test-app.js';

const EVENTS = 3_000;

/**
 * A reader catching up on the feed (SPEC §14) pays for its page, not for everything after it. The
 * feed's newest events are past what the table's statistics know; the planner then took a page
 * for a handful of rows, read every event past the position through a bitmap and sorted them.
 * This replays the repository's own transaction with its read explained.
 */
describeEachBackend(
  'a page of the change feed is read in index order, whatever the statistics say (SPEC §14)',
  (ctx) => {
    let tenant: TestTenant;

    before(async () => {
      tenant = await ctx.tenant();
      // Statistics taken while the feed was empty, as an append-only table's always lag its tail.
      await sql`analyze events`.execute(ctx.db);
      for (let batch = 0; batch < EVENTS / 100; batch++) {
        const items = Array.from({ length: 100 }, (_, i) => ({
          name: `Lead ${batch}.${i}`,
          email: `lead${batch}.${i}@example.com`,
        }));
        const answer = await ctx.request('POST', `${API}/leads/batch`, { token: tenant.token, body: { items } });
        assert.equal(answer.status, 200, answer.text);
      }
      await feedSettled(ctx.db, tenant.id);
    });

    it('scans the index for the page, with no bitmap and no sort', async () => {
      const recorder = new RecordQueries();
      const rows = await new EventRepository(recorder.on(ctx.db)).feed(tenant.id, {
        types: ALL_EVENT_TYPES,
        limit: 11,
      });
      assert.equal(rows.length, 11);
      const read = recorder.all.findIndex((query) => /from events/.test(query.sql));
      assert.ok(read >= 0, 'the feed read was recorded');
      const before = recorder.all.slice(0, read).filter((query) => !/^\s*(begin|start)/i.test(query.sql));
      const plan = await ctx.db.transaction().execute(async (trx) => {
        for (const query of before) await trx.executeQuery(query);
        const query = recorder.all[read] as CompiledQuery;
        const { rows: explained } = await trx.executeQuery<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>({
          ...query,
          sql: `explain (format json) ${query.sql}`,
        });
        return explained[0]?.['QUERY PLAN'][0].Plan;
      });
      assert.ok(plan);
      const nodes = nodeTypes(plan);
      assert.ok(nodes.includes('Index Scan'), nodes.join(' > '));
      assert.ok(!nodes.includes('Bitmap Heap Scan') && !nodes.includes('Sort'), nodes.join(' > '));
    });
  },
);
