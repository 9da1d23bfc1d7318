import { sql } from 'kysely';
import type { Db } from '../db/database.js';

export interface SummaryPeriod {
  readonly since: Date;
  readonly until: Date;
  readonly source?: string | undefined;
  /** The pipeline as leads hold it (storedPipeline): null is the tenant's first. */
  readonly pipeline: string | null;
}

/** One group of the summary: by status, by source, or by UTC day, as `kind` says. */
export interface SummaryGroup {
  readonly kind: 'status' | 'source' | 'day';
  readonly key: string | null;
  readonly count: number;
}

/** What `grouping(status, source, day)` answers for each grouping set. */
const KIND_OF_GROUPING: Readonly<Record<number, SummaryGroup['kind']>> = { 3: 'status', 5: 'source', 6: 'day' };

/**
 * SPEC §18's counts in one statement: the tenant's leads of one pipeline created in the period (a range of the
 * tenant's creation-time index; with `source`, of its source index), grouped three ways at once.
 */
export async function summaryGroups(db: Db, tenantId: string, period: SummaryPeriod): Promise<SummaryGroup[]> {
  const source = period.source === undefined ? sql`` : sql`and source = ${period.source}`;
  const { rows } = await sql<{
    grouping: number;
    status: string | null;
    source: string | null;
    day: string | null;
    count: number;
  }>`
    select grouping(status, source, day) as grouping, status, source, day::text as day, count(*)::int as count
    from (
      select status, source, (created_at at time zone 'UTC')::date as day
      from leads
      where tenant_id = ${tenantId} and created_at >= ${period.since} and created_at < ${period.until}
        and pipeline_id is not distinct from ${period.pipeline}::uuid ${source}
    ) as period
    group by grouping sets ((status), (source), (day))`.execute(db);
  return rows.map((row) => {
    const kind = KIND_OF_GROUPING[row.grouping] as SummaryGroup['kind'];
    return { kind, key: row[kind], count: row.count };
  });
}
