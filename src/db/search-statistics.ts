import { sql } from 'kysely';
import type { Db } from './database.js';

/** How long the statistics read are used: PostgreSQL renews them when it analyses the table. */
const STATISTICS_TTL_MS = 5 * 60_000;

/**
 * Which `q` terms PostgreSQL's planner overrates. It prices `search ilike '%term%'` by the share of
 * the hundred values its statistics keep of the search expression (the histogram's bounds) that
 * contain the term: a term in none of them is priced as rare, and the planner reads the trigram
 * index, rightly; a term in one is priced at 1 % of the rows, however few it matches
 * (search-page.ts). This reads those values, from pg_stats, at most every five minutes per table.
 */
export class SearchStatistics {
  #bounds: readonly string[] = [];
  #readAt = Number.NEGATIVE_INFINITY;
  #reading: Promise<void> | undefined;

  /** `index`: the search expression's trigram index, whose statistics are the expression's. */
  constructor(private readonly index: string) {}

  /** Whether the planner would price `term` by a value its statistics keep (and so at 1 % of the rows or more). */
  async overrates(handle: Db, term: string): Promise<boolean> {
    if (performance.now() - this.#readAt > STATISTICS_TTL_MS) {
      this.#reading ??= this.#read(handle).finally(() => {
        this.#reading = undefined;
      });
      await this.#reading;
    }
    const needle = term.toLowerCase();
    return this.#bounds.some((bound) => bound.includes(needle));
  }

  async #read(handle: Db): Promise<void> {
    try {
      const { rows } = await sql<{ bounds: string[] | null }>`
        select histogram_bounds::text::text[] as bounds
        from pg_stats
        where schemaname = current_schema() and tablename = ${this.index}`.execute(handle);
      this.#bounds = (rows[0]?.bounds ?? []).map((bound) => bound.toLowerCase());
    } catch {
      // Not readable (a role without the right): every term goes the planner's way, as before.
      this.#bounds = [];
    }
    this.#readAt = performance.now();
  }
}
