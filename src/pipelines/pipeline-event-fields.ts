import { toIso } from '../db/timestamp-text.js';
import type { FamilyFields } from '../events/event.service.js';
import type { StoredRow } from '../records/record-store.js';
import { type PipelineRow, toPipeline } from './pipeline.repository.js';

const asShown = (value: unknown) => value;
const asTimestamp = (value: unknown) => toIso(value as string | null);

/** Each column of a pipeline's row as its `pipeline.*` events show it (SPEC §20). */
const FIELD_OF_COLUMN: Readonly<Record<string, { field: string; fromStored(value: unknown): unknown }>> = {
  id: { field: 'id', fromStored: asShown },
  name: { field: 'name', fromStored: asShown },
  isDefault: { field: 'default', fromStored: asShown },
  stages: { field: 'stages', fromStored: asShown },
  createdAt: { field: 'createdAt', fromStored: asTimestamp },
  updatedAt: { field: 'updatedAt', fromStored: asTimestamp },
};

/** How the feed and webhooks show a pipeline's events: the pipeline as `GET /pipelines/{id}` does. */
export const pipelineEventFields: FamilyFields = {
  toObject: (row: StoredRow) => ({ ...toPipeline(row as unknown as PipelineRow) }),
  fieldOf: (column) => (Object.hasOwn(FIELD_OF_COLUMN, column) ? FIELD_OF_COLUMN[column] : undefined),
};
