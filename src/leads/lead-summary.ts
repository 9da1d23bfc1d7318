import type { Db } from '../db/database.js';
import { type StageKind, storedPipeline } from '../pipelines/pipeline.types.js';
import type { TenantPipelines } from '../pipelines/tenant-pipelines.js';
import { validationFailed } from '../shared/errors.js';
import { fieldMessage, fieldMessages } from '../shared/messages.js';
import { summaryGroups } from './lead-summary.repository.js';
import {
  DEFAULT_SUMMARY_DAYS,
  type LeadSummary,
  type LeadSummaryQuery,
  MAX_SUMMARY_DAYS,
} from './lead-summary.schemas.js';

const DAY_MS = 86_400_000;

/**
 * SPEC §18 and §20: the leads of one pipeline (the default unless `pipeline=`) created in a period,
 * by status (its stages in board order, each with its kind, zeros included), by source (largest
 * first) and per UTC day (every day of the period), from one grouped query.
 */
export async function leadSummary(
  db: Db,
  tenantId: string,
  pipelines: TenantPipelines,
  query: LeadSummaryQuery,
  now = new Date(),
): Promise<LeadSummary> {
  const until = query.createdUntil === undefined ? now : new Date(query.createdUntil);
  const since =
    query.createdSince === undefined
      ? new Date(startOfUtcDay(until.getTime() - 1) - (DEFAULT_SUMMARY_DAYS - 1) * DAY_MS)
      : new Date(query.createdSince);
  if (since.getTime() >= until.getTime()) {
    throw validationFailed([
      { field: 'createdUntil', message: fieldMessage('createdUntil', fieldMessages.after('createdSince')) },
    ]);
  }
  const days = utcDays(since, until);
  if (days.length > MAX_SUMMARY_DAYS) {
    throw validationFailed([
      { field: 'createdSince', message: fieldMessage('createdSince', fieldMessages.periodDays(MAX_SUMMARY_DAYS)) },
    ]);
  }
  const pipeline = query.pipeline === undefined ? pipelines.default : pipelines.named(query.pipeline);
  const stored = storedPipeline(tenantId, pipeline.id);
  const groups = await summaryGroups(db, tenantId, { since, until, source: query.source, pipeline: stored });
  const counted = (kind: string) =>
    new Map(groups.filter((group) => group.kind === kind).map((group) => [group.key, group.count]));
  const byStatus = counted('status');
  // Statuses no stage has now (a former FUNIL_LEAD_STATUSES's), still held by some leads, come after the stages.
  const kinds = new Map<string, StageKind>(pipeline.stages.map((stage) => [stage.key, stage.kind]));
  const shown = [...kinds.keys(), ...[...byStatus.keys()].filter((status) => !kinds.has(status as string))];
  const perDay = counted('day');
  return {
    total: [...byStatus.values()].reduce((sum, count) => sum + count, 0),
    pipeline: pipeline.id,
    byStatus: shown.map((status) => ({
      status: status as string,
      kind: kinds.get(status as string) ?? null,
      count: byStatus.get(status) ?? 0,
    })),
    bySource: [...counted('source')]
      .map(([source, count]) => ({ source, count }))
      .sort((a, b) => b.count - a.count || bySourceName(a.source, b.source)),
    perDay: days.map((date) => ({ date, count: perDay.get(date) ?? 0 })),
    createdSince: since.toISOString(),
    createdUntil: until.toISOString(),
  };
}

function startOfUtcDay(ms: number): number {
  return Math.floor(ms / DAY_MS) * DAY_MS;
}

/** The UTC days a period [since, until) touches, as YYYY-MM-DD. */
function utcDays(since: Date, until: Date): string[] {
  const days: string[] = [];
  const last = startOfUtcDay(until.getTime() - 1);
  for (let day = startOfUtcDay(since.getTime()); day <= last && days.length <= MAX_SUMMARY_DAYS; day += DAY_MS) {
    days.push(new Date(day).toISOString().slice(0, 10));
  }
  return days;
}

/** Named sources alphabetically, `null` (no source) last. */
function bySourceName(a: string | null, b: string | null): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return a < b ? -1 : 1;
}
