import { type ObjectRow, toObject as toExport } from '../exports/export.repository.js';
import type { ImportRow } from '../imports/import.repository.js';
import { toImport } from '../imports/import.service.js';
import type { StoredRow } from '../records/record-store.js';
import type { FamilyFields } from './event.service.js';

/** A stored timestamp (jsonb holds its text) as a Date, or null. */
function dateOf(value: unknown): Date | null {
  return value === null || value === undefined ? null : new Date(value as string);
}

/** A job's event holds the job as it ended, and changes no field: `previous` is always empty. */
const noField = () => undefined;

/** How the feed and webhooks show an `import.finished` event: the import as `GET /imports/{id}` did when it ended. */
export const importEventFields: FamilyFields = {
  toObject(row: StoredRow) {
    const stored = row as unknown as Record<string, unknown>;
    return {
      ...toImport({
        ...(stored as unknown as ImportRow),
        createdAt: dateOf(stored.createdAt) as Date,
        startedAt: dateOf(stored.startedAt),
        finishedAt: dateOf(stored.finishedAt),
        revertStartedAt: dateOf(stored.revertStartedAt),
        revertFinishedAt: dateOf(stored.revertFinishedAt),
      }),
    };
  },
  fieldOf: noField,
};

/** How the feed and webhooks show an `export.finished` event: the export as `GET /exports/{id}` did when it ended. */
export const exportEventFields: FamilyFields = {
  toObject(row: StoredRow) {
    const stored = row as unknown as Record<string, unknown>;
    const finishedAt = dateOf(stored.finishedAt);
    const object: ObjectRow = {
      id: stored.id as string,
      resource: stored.resource as ObjectRow['resource'],
      format: stored.format as ObjectRow['format'],
      status: stored.status as ObjectRow['status'],
      total: stored.total as number | null,
      processed: stored.processed as number,
      startedAt: dateOf(stored.startedAt),
      finishedAt,
      expiresAt: dateOf(stored.expiresAt),
      fileBytes: stored.fileBytes === null ? null : String(stored.fileBytes),
    };
    return { ...toExport(object, finishedAt?.getTime()) };
  },
  fieldOf: noField,
};
