import { type Kysely, sql } from 'kysely';
import { tokenScopes } from '../migration-helpers.js';

/** The scopes a token could hold before this migration (frozen: later ones add their own). */
const SCOPES_BEFORE = [
  'leads:read',
  'leads:write',
  'leads:create',
  'customers:read',
  'customers:write',
  'webhooks:read',
  'webhooks:write',
  'fields:write',
  'privacy:read',
  'privacy:write',
] as const;

/**
 * SPEC §20: each tenant's pipelines, kept as data.
 *
 * A lead's pipeline is `leads.pipeline_id`; null names the tenant's first pipeline, whose id is the
 * tenant's own. So the migration writes no lead: on a table of 1,000,000 leads it adds a nullable
 * column (a change of the catalog only, under a lock held for milliseconds) and leaves every row as
 * it is, already in its tenant's first pipeline. The application stores null for that pipeline on
 * every write too, so a lead has one spelling of it, and a filter on it is one comparison.
 *
 * The pipelines themselves are made by the application, which knows FUNIL_LEAD_STATUSES: at start
 * for every tenant without one, and for a new tenant on its first need (PipelineRepository).
 * `pipeline_moves` holds the moves still to make after a stage or a pipeline that held leads was
 * removed, with the position the walk reached (it goes on from there after a crash); its pipelines
 * are as leads hold them (null: the tenant's first).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await tokenScopes(db, [...SCOPES_BEFORE, 'pipelines:write']);
  await sql`
    create table pipelines (
      tenant_id uuid not null references tenants (id) on delete cascade,
      id uuid not null,
      name text not null check (char_length(name) between 1 and 100),
      is_default boolean not null default false,
      stages jsonb not null check (jsonb_typeof(stages) = 'array' and jsonb_array_length(stages) between 1 and 50),
      created_at timestamptz(3) not null default now(),
      updated_at timestamptz(3) not null default now(),
      version integer not null default 1,
      primary key (tenant_id, id)
    )`.execute(db);
  await sql`create unique index pipelines_one_default on pipelines (tenant_id) where is_default`.execute(db);
  await sql`alter table leads add column pipeline_id uuid`.execute(db);
  await sql`
    create table pipeline_moves (
      tenant_id uuid not null references tenants (id) on delete cascade,
      id uuid not null,
      from_pipeline uuid,
      from_stage text,
      to_pipeline uuid,
      to_stage text not null,
      after_created_at timestamptz(3),
      after_id uuid,
      token_id uuid,
      request_id text,
      created_at timestamptz(3) not null default now(),
      primary key (tenant_id, id)
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists pipeline_moves`.execute(db);
  await sql`alter table leads drop column if exists pipeline_id`.execute(db);
  await sql`drop table if exists pipelines`.execute(db);
  await tokenScopes(db, SCOPES_BEFORE);
}
