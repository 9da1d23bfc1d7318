import { extname } from 'node:path';

/** The file formats of imports and exports (SPEC §23), and their media types. */
export const MEDIA_TYPES = { csv: 'text/csv', ndjson: 'application/x-ndjson' } as const;
export type Format = keyof typeof MEDIA_TYPES;
export const FORMATS = Object.keys(MEDIA_TYPES) as Format[];

const EXTENSIONS: Readonly<Record<string, Format>> = { '.csv': 'csv', '.ndjson': 'ndjson', '.jsonl': 'ndjson' };

/** The format a file's name says (`.csv`, `.ndjson`, `.jsonl`), if it says one. */
export function formatByName(file: string): Format | undefined {
  return EXTENSIONS[extname(file).toLowerCase()];
}
