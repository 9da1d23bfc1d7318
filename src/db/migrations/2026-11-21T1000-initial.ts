import { type Kysely, sql } from 'kysely';

/**
 * Timestamps are stored with millisecond precision, the precision of the API,
 * so that a value read back and sent again (or used in a cursor) compares equal.
 * Lead statuses are configurable (FUNIL_LEAD_STATUSES), so only their shape is checked here.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table tenants (
      id uuid primary key,
      name text not null check (char_length(name) between 1 and 200),
      active boolean not null default true,
      created_at timestamptz(3) not null default now(),
      updated_at timestamptz(3) not null default now()
    )`.execute(db);

  await sql`
    create table api_tokens (
      id uuid primary key,
      tenant_id uuid not null references tenants (id),
      name text not null check (char_length(name) between 1 and 200),
      token_hash text not null unique check (token_hash ~ '^[0-9a-f]{64}$'),
      prefix text not null check (char_length(prefix) = 8),
      scopes text[] not null check (
        cardinality(scopes) between 1 and 4
        and scopes <@ array['leads:read', 'leads:write', 'customers:read', 'customers:write']::text[]
      ),
      expires_at timestamptz(3),
      revoked_at timestamptz(3),
      last_used_at timestamptz(3),
      created_at timestamptz(3) not null default now()
    )`.execute(db);
  await sql`create index api_tokens_tenant_idx on api_tokens (tenant_id, created_at)`.execute(db);

  await sql`
    create table leads (
      id uuid primary key,
      tenant_id uuid not null references tenants (id),
      name text not null check (char_length(name) between 1 and 200),
      email text check (char_length(email) <= 254 and email = lower(email)),
      phone text check (char_length(phone) <= 50),
      source text check (char_length(source) <= 100),
      status text not null check (status ~ '^[a-z0-9_-]{1,50}$'),
      score integer not null default 0 check (score between 0 and 100),
      last_contact timestamptz(3),
      notes text check (char_length(notes) <= 10000),
      created_by uuid not null references api_tokens (id),
      created_at timestamptz(3) not null default now(),
      updated_at timestamptz(3) not null default now(),
      constraint leads_contact_required check (email is not null or phone is not null)
    )`.execute(db);
  await sql`create index leads_tenant_created_idx on leads (tenant_id, created_at desc, id desc)`.execute(db);

  await sql`
    create table customers (
      id uuid primary key,
      tenant_id uuid not null references tenants (id),
      first_name text check (char_length(first_name) <= 100),
      last_name text check (char_length(last_name) <= 100),
      name text not null check (char_length(name) between 1 and 200),
      email text not null check (char_length(email) between 3 and 254 and email = lower(email)),
      phone text check (char_length(phone) <= 50),
      status text not null default 'active' check (status in ('active', 'inactive', 'blocked')),
      type text not null default 'individual' check (type in ('individual', 'company')),
      value numeric(14, 2) not null default 0 check (value >= 0),
      auto_payment boolean not null default false,
      notes text check (char_length(notes) <= 10000),
      created_at timestamptz(3) not null default now(),
      updated_at timestamptz(3) not null default now()
    )`.execute(db);
  await sql`create unique index customers_tenant_email_key on customers (tenant_id, email)`.execute(db);
  await sql`create index customers_tenant_created_idx on customers (tenant_id, created_at desc, id desc)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['customers', 'leads', 'api_tokens', 'tenants']) {
    await sql`drop table if exists ${sql.table(table)}`.execute(db);
  }
}
