import type { ColumnType, Generated } from 'kysely';

/** Set by the database on insert; never written by the application afterwards. */
type CreatedAt = ColumnType<Date, never, never>;
type Timestamp = ColumnType<Date, Date | undefined, Date>;
type NullableTimestamp = ColumnType<Date | null, Date | null | undefined, Date | null>;
/** numeric(14,2) arrives as a string from PostgreSQL; it is converted in the mappers. */
type Money = ColumnType<string, number | undefined, number>;

export interface TenantTable {
  id: string;
  name: string;
  active: Generated<boolean>;
  /** ISO 3166-1 alpha-2: the country its phones are read in when they carry no +code (SPEC §21). */
  phoneCountry: Generated<string>;
  createdAt: CreatedAt;
  updatedAt: Timestamp;
}

export interface ApiTokenTable {
  id: string;
  tenantId: string;
  name: string;
  tokenHash: string;
  prefix: string;
  scopes: string[];
  expiresAt: NullableTimestamp;
  revokedAt: NullableTimestamp;
  lastUsedAt: NullableTimestamp;
  createdAt: CreatedAt;
}

export interface LeadTable {
  id: string;
  tenantId: string;
  name: string;
  email: string | null;
  phone: string | null;
  source: string | null;
  status: string;
  score: number;
  lastContact: NullableTimestamp;
  notes: string | null;
  externalId: string | null;
  customerId: string | null;
  /** Null: the tenant's first pipeline, whose id is the tenant's (migration 2026-11-28T1000). */
  pipelineId: string | null;
  /** SPEC §21's matching keys (shared/match-keys.ts), null until written or backfilled. */
  matchEmail: string | null;
  matchPhone: string | null;
  custom: Generated<CustomValues>;
  createdBy: string;
  createdAt: CreatedAt;
  updatedAt: Timestamp;
  version: Generated<number>;
}

export interface CustomerTable {
  id: string;
  tenantId: string;
  firstName: string | null;
  lastName: string | null;
  name: string;
  email: string;
  phone: string | null;
  status: string;
  type: string;
  value: Money;
  autoPayment: boolean;
  notes: string | null;
  externalId: string | null;
  matchEmail: string | null;
  matchPhone: string | null;
  custom: Generated<CustomValues>;
  createdAt: CreatedAt;
  updatedAt: Timestamp;
  version: Generated<number>;
}

/** A record's values of its tenant's own fields (SPEC §16), by key. */
export type CustomValues = Record<string, string | number | boolean | string[]>;

export interface CustomFieldTable {
  tenantId: string;
  resource: 'lead' | 'customer';
  key: string;
  label: string;
  type: string;
  options: string[] | null;
  required: boolean;
  createdAt: CreatedAt;
  updatedAt: Timestamp;
}

export interface CustomFieldRemovalTable {
  tenantId: string;
  resource: 'lead' | 'customer';
  key: string;
  afterCreatedAt: Date | null;
  afterId: string | null;
  tokenId: string | null;
  requestId: string | null;
  createdAt: CreatedAt;
}

/** A pipeline's stage as stored in `pipelines.stages` (SPEC §20). */
export interface StoredStage {
  key: string;
  label: string;
  kind: 'open' | 'won' | 'lost';
}

export interface PipelineTable {
  tenantId: string;
  id: string;
  name: string;
  isDefault: boolean;
  stages: ColumnType<StoredStage[], string, string>;
  createdAt: CreatedAt;
  updatedAt: Timestamp;
  version: Generated<number>;
}

export interface PipelineMoveTable {
  tenantId: string;
  id: string;
  /** As leads hold it: null is the tenant's first pipeline. */
  fromPipeline: string | null;
  /** Null: every lead of the pipeline (it is being deleted). */
  fromStage: string | null;
  toPipeline: string | null;
  toStage: string;
  afterCreatedAt: Date | null;
  afterId: string | null;
  tokenId: string | null;
  requestId: string | null;
  createdAt: CreatedAt;
}

export interface IdempotencyKeyTable {
  tenantId: string;
  tokenId: string;
  key: string;
  requestHash: string;
  state: 'running' | 'done';
  responseStatus: number | null;
  responseHeaders: ColumnType<Record<string, string> | null, string | null, string | null>;
  responseBody: string | null;
  createdAt: CreatedAt;
  startedAt: Timestamp;
}

export interface AppSecretTable {
  name: string;
  value: string;
}

/** SPEC §23: an export, its request and its progress. */
export interface ExportTable {
  tenantId: string;
  id: string;
  resource: 'lead' | 'customer';
  format: 'csv' | 'ndjson';
  query: ColumnType<Record<string, unknown>, string, string>;
  /** The API fields asked for; null: every field. */
  fields: ColumnType<string[] | null, string | null, string | null>;
  status: Generated<'queued' | 'running' | 'succeeded' | 'failed' | 'expired'>;
  total: number | null;
  processed: Generated<number>;
  /** numeric's text from bigint: converted in the mapper. */
  fileBytes: ColumnType<string | null, number | null, number | null>;
  runs: Generated<number>;
  tokenId: string | null;
  createdAt: CreatedAt;
  startedAt: NullableTimestamp;
  finishedAt: NullableTimestamp;
  expiresAt: NullableTimestamp;
}

/** A piece of an export's file: one gzip member. */
export interface ExportChunkTable {
  tenantId: string;
  exportId: string;
  seq: number;
  data: Buffer;
}

export interface Tables {
  appSecrets: AppSecretTable;
  tenants: TenantTable;
  apiTokens: ApiTokenTable;
  leads: LeadTable;
  customers: CustomerTable;
  idempotencyKeys: IdempotencyKeyTable;
  customFields: CustomFieldTable;
  customFieldRemovals: CustomFieldRemovalTable;
  pipelines: PipelineTable;
  pipelineMoves: PipelineMoveTable;
  matchKeyBackfills: { tableName: 'leads' | 'customers'; afterId: string | null };
  exports: ExportTable;
  exportChunks: ExportChunkTable;
}
