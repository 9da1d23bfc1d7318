import { type Kysely, sql } from 'kysely';

/**
 * SPEC §21: merges, and their undo.
 *
 * `merges` keeps what an undo needs, as the rows were (`to_jsonb` of the table's row): the
 * target before and after, and each source, deleted by the merge. It is kept as long as events
 * are (FUNIL_EVENT_RETENTION_DAYS), pruned with them, and erased with a person's data.
 * Events gain what SPEC §21 shows of a merge: a source's `*.deleted` says whom it was merged into
 * (`merged_into`, reason `merge`), the target's `*.merged` which records it took in
 * (`merged_ids`); an undo's events carry reason `unmerge`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table events drop constraint if exists events_reason_check`.execute(db);
  await sql`alter table events add constraint events_reason_check check (reason in ('erasure', 'merge', 'unmerge'))`.execute(
    db,
  );
  await sql`alter table events add column merged_into uuid, add column merged_ids uuid[]`.execute(db);
  await sql`
    create table merges (
      tenant_id uuid not null references tenants (id) on delete cascade,
      id uuid not null,
      resource text not null check (resource in ('lead', 'customer')),
      target_id uuid not null,
      source_ids uuid[] not null,
      target_before jsonb not null,
      target_after jsonb not null,
      sources jsonb not null,
      token_id uuid,
      created_at timestamptz(3) not null default now(),
      undone_at timestamptz(3),
      primary key (tenant_id, id)
    )`.execute(db);
  await sql`create index merges_created_idx on merges (created_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists merges`.execute(db);
  await sql`alter table events drop column if exists merged_into, drop column if exists merged_ids`.execute(db);
  await sql`alter table events drop constraint if exists events_reason_check`.execute(db);
  await sql`alter table events add constraint events_reason_check check (reason in ('erasure'))`.execute(db);
}
