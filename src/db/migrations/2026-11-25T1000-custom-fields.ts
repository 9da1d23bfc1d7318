import { type Kysely, sql } from 'kysely';
import { tokenScopes } from '../migration-helpers.js';

/** The scopes a token could hold before this migration (frozen: later ones add their own). */
const SCOPES_BEFORE = [
  'leads:read',
  'leads:write',
  'customers:read',
  'customers:write',
  'webhooks:read',
  'webhooks:write',
] as const;

/**
 * SPEC §16: each tenant's own fields on leads and customers.
 *
 * A record keeps its values in `custom` (a JSON object, `{}` when it has none), indexed by GIN for
 * `custom @> {"key": value}` — led by the tenant when btree_gin is there, so that one tenant's
 * filter never reads another tenant's entries. `custom_fields` holds the definitions;
 * `custom_field_removals` the values still to remove after a definition was deleted, with the
 * position the removal reached (it goes on from there after a crash).
 *
 * The rules the application checks in full (types, options, required) are backed here by a
 * trigger for what must hold even for a writer whose definitions are out of date (another
 * instance's cache): each value it writes belongs to a defined field, with that field's JSON
 * type. The trigger also holds a shared advisory lock on each field a write sets, until the write
 * commits; deleting a definition takes that lock exclusively (CustomFieldService), so it waits for
 * writes of the field in flight: once the deletion commits, no record can gain a value of it, and
 * the removal that follows misses none. (An advisory lock, not a row lock on the definition: that
 * would write to the definition's row on every such write.)
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await tokenScopes(db, [...SCOPES_BEFORE, 'fields:write']);
  await sql`
    create table custom_fields (
      tenant_id uuid not null references tenants (id) on delete cascade,
      resource text not null check (resource in ('lead', 'customer')),
      key text not null check (key ~ '^[a-z][a-z0-9_]{0,39}$'),
      label text not null check (char_length(label) between 1 and 200),
      type text not null
        check (type in ('text', 'number', 'integer', 'boolean', 'date', 'datetime', 'select', 'multiselect')),
      options text[] check (cardinality(options) between 1 and 100),
      required boolean not null default false,
      created_at timestamptz(3) not null default now(),
      updated_at timestamptz(3) not null default now(),
      primary key (tenant_id, resource, key),
      constraint custom_fields_options_of_choices check ((options is not null) = (type in ('select', 'multiselect')))
    )`.execute(db);
  await sql`
    create table custom_field_removals (
      tenant_id uuid not null references tenants (id) on delete cascade,
      resource text not null,
      key text not null,
      after_created_at timestamptz(3),
      after_id uuid,
      token_id uuid,
      request_id text,
      created_at timestamptz(3) not null default now(),
      primary key (tenant_id, resource, key)
    )`.execute(db);

  await sql`
    create function funil_custom_values_check() returns trigger language plpgsql as $$
    declare
      target text := tg_argv[0];
      written text[] := array(
        select entry.key from jsonb_each(new.custom) as entry
        where tg_op = 'INSERT' or entry.value is distinct from old.custom -> entry.key);
      refused text;
    begin
      if cardinality(written) = 0 then
        return new;
      end if;
      -- The lock CustomFieldRepository.delete takes exclusively (fieldLockName), in one order.
      perform pg_advisory_xact_lock_shared(hash)
        from (select hashtextextended(new.tenant_id::text || '|custom-field|' || target || '|' || key, 0) as hash
              from unnest(written) as key order by 1) as locks;
      select entry.key into refused
        from jsonb_each(new.custom) as entry
        left join custom_fields as field
          on field.tenant_id = new.tenant_id and field.resource = target and field.key = entry.key
        where entry.key = any (written)
          and (field.key is null or jsonb_typeof(entry.value) <> case
            when field.type in ('number', 'integer') then 'number'
            when field.type = 'boolean' then 'boolean'
            when field.type = 'multiselect' then 'array'
            else 'string' end)
        limit 1;
      if refused is not null then
        raise exception 'custom value % is not of a field defined for this %', refused, target
          using errcode = 'check_violation', constraint = 'custom_values_defined', column = refused;
      end if;
      return new;
    end
    $$`.execute(db);

  const tenantLed = await hasExtension(db, 'btree_gin');
  for (const [table, resource] of [
    ['leads', 'lead'],
    ['customers', 'customer'],
  ] as const) {
    await sql`
      alter table ${sql.table(table)}
        add column custom jsonb not null default '{}' check (jsonb_typeof(custom) = 'object')`.execute(db);
    const columns = tenantLed ? sql`tenant_id, custom jsonb_path_ops` : sql`custom jsonb_path_ops`;
    await sql`create index ${sql.id(`${table}_tenant_custom_idx`)} on ${sql.table(table)} using gin (${columns})`.execute(
      db,
    );
    await sql`
      create trigger ${sql.id(`${table}_custom_values_insert`)} before insert on ${sql.table(table)}
      for each row when (new.custom <> '{}'::jsonb)
      execute function funil_custom_values_check(${sql.lit(resource)})`.execute(db);
    await sql`
      create trigger ${sql.id(`${table}_custom_values_update`)} before update of custom on ${sql.table(table)}
      for each row when (new.custom is distinct from old.custom and new.custom <> '{}'::jsonb)
      execute function funil_custom_values_check(${sql.lit(resource)})`.execute(db);
  }
}

async function hasExtension(db: Kysely<unknown>, name: string): Promise<boolean> {
  const { rows } = await sql<{ found: boolean }>`
    select exists (select 1 from pg_extension where extname = ${name}) as found`.execute(db);
  return rows[0]?.found === true;
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['leads', 'customers']) {
    await sql`drop trigger if exists ${sql.id(`${table}_custom_values_insert`)} on ${sql.table(table)}`.execute(db);
    await sql`drop trigger if exists ${sql.id(`${table}_custom_values_update`)} on ${sql.table(table)}`.execute(db);
    await sql`alter table ${sql.table(table)} drop column if exists custom`.execute(db);
  }
  await sql`drop function if exists funil_custom_values_check()`.execute(db);
  await sql`drop table if exists custom_field_removals`.execute(db);
  await sql`drop table if exists custom_fields`.execute(db);
  await tokenScopes(db, SCOPES_BEFORE);
}
