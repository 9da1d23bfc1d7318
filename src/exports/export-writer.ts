import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { CursorPosition, SortKey } from '../db/keyset.js';
import type { CustomFieldCatalog } from '../fields/custom-field-catalog.js';
import { type ExportRequest, exportRepository } from './export.repository.js';
import { csvHeader, csvRows, ndjsonRows } from './export-format.js';
import type { ExportResourceSpec } from './export-resources.js';
import type { SnapshotSession } from './export-snapshot.js';

const gzipped = promisify(gzip);

/** Rows per page, and so per chunk: each page is a keyset page of the list (SPEC §6). */
export const EXPORT_PAGE_ROWS = 1000;

/** What a finished file holds. */
export interface WrittenFile {
  readonly total: number;
  readonly fileBytes: number;
}

/**
 * Writes an export's file: the list's keyset pages read in the snapshot (each page's ids, then
 * their full objects), each page rendered and gzipped into one chunk (the first with the CSV
 * header). Undefined when the export stopped being wanted (expired by an erasure) or the run is
 * stopping; its chunks are then gone or left for the next run to remove.
 */
export async function writeFile(
  request: ExportRequest,
  spec: ExportResourceSpec,
  catalog: CustomFieldCatalog,
  session: SnapshotSession,
  stopping: () => boolean,
  pageRows = EXPORT_PAGE_ROWS,
): Promise<WrittenFile | undefined> {
  const { tenantId, id } = request;
  const { sort, filters } = spec.listRequest(request.query);
  const key = spec.sortKeys[sort.field] as SortKey<never>;
  const render = await session.read(async (reader) => {
    const custom = (await catalog.of(reader, tenantId, spec.resource)).definitions.map((d) => `custom.${d.key}`);
    return renderer(request, spec.objectFields, custom);
  });
  let after: CursorPosition | undefined;
  let seq = 0;
  let total = 0;
  let fileBytes = 0;
  for (;;) {
    if (stopping()) return undefined;
    const { objects, next } = await session.read(async (reader) => {
      const { items, resumeAfter } = await spec.source.list(reader, tenantId, filters, {
        key,
        descending: sort.descending,
        limit: pageRows,
        after,
      });
      const page = items.slice(0, pageRows);
      // As a list page does (readPage): more rows follow, or the page stopped at its scan bound.
      const last = items.length > pageRows ? page.at(-1) : resumeAfter;
      const ids = page.map((item) => item._id);
      const found = ids.length === 0 ? [] : await spec.source.lookupMany(reader, tenantId, ids);
      const position = last && { value: key.valueOf(last as never), id: last._id };
      return { objects: found.map((stored) => stored.object as Record<string, unknown>), next: position };
    });
    const text = (seq === 0 ? render.header : '') + render.rows(objects);
    // The first chunk is written even when empty: an empty file is still a gzip stream.
    if (seq === 0 || text.length > 0) {
      const bytes = Buffer.from(text, 'utf8');
      total += objects.length;
      fileBytes += bytes.length;
      const data = await gzipped(bytes);
      const kept = await exportRepository.addChunk(session.writer, tenantId, id, { seq, data, processed: total });
      if (!kept) return undefined;
      seq += 1;
    }
    if (!next) return { total, fileBytes };
    after = next;
    // Between pages, other work of the event loop (and, embedded, of the database) goes first.
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** The header and the rows of the export's format, for its fields (custom ones as the tenant defines them now). */
function renderer(request: ExportRequest, objectFields: readonly string[], custom: readonly string[]) {
  const expand = (fields: readonly string[]) => fields.flatMap((field) => (field === 'custom' ? custom : [field]));
  if (request.format === 'ndjson') {
    const fields = request.fields ?? undefined;
    return { header: '', rows: (objects: Record<string, unknown>[]) => ndjsonRows(objects, fields) };
  }
  const columns = expand(request.fields ?? objectFields);
  return { header: csvHeader(columns), rows: (objects: Record<string, unknown>[]) => csvRows(objects, columns) };
}
