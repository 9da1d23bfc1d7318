import { pipeline, Readable } from 'node:stream';
import { createGunzip, createGzip } from 'node:zlib';
import type { Db } from '../db/database.js';
import { exportRepository } from './export.repository.js';

/** Chunks read per query while a file streams: a few pages' worth, never the whole file. */
const CHUNKS_PER_READ = 8;

/** Whether an Accept-Encoding header takes gzip (RFC 9110: `gzip` or `*` with a q above 0). */
export function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false;
  let gzip: number | undefined;
  let any: number | undefined;
  for (const part of header.split(',')) {
    const [name = '', ...params] = part.split(';').map((piece) => piece.trim().toLowerCase());
    const q = params.find((param) => param.startsWith('q='));
    const weight = q === undefined ? 1 : Number(q.slice(2));
    if (name === 'gzip' || name === 'x-gzip') gzip = weight;
    if (name === '*') any = weight;
  }
  const weight = gzip ?? any ?? 0;
  return Number.isFinite(weight) && weight > 0;
}

/** The stored chunks of a file, a few at a time: each one gzip member (a page of rows). */
async function* storedChunks(db: Db, tenantId: string, id: string): AsyncGenerator<Buffer> {
  let seq = 0;
  for (;;) {
    const chunks = await exportRepository.chunks(db, tenantId, id, seq, CHUNKS_PER_READ);
    for (const chunk of chunks) yield chunk.data;
    const last = chunks.at(-1);
    if (chunks.length < CHUNKS_PER_READ || !last) return;
    seq = last.seq + 1;
  }
}

/**
 * The file as a stream: the plain text, or for a client that takes gzip, one gzip member. The
 * stored members laid end to end are a valid gzip file (RFC 1952), but curl and other clients
 * with a single inflate stop after the first: they got the first page only. So the chunks are
 * unzipped on the way and zipped again as one member, a chunk at a time. `onError`: a failure
 * mid-stream (the connection is then cut).
 */
export function fileStream(
  db: Db,
  tenantId: string,
  id: string,
  gzip: boolean,
  onError: (error: Error) => void,
): Readable {
  const stored = Readable.from(storedChunks(db, tenantId, id));
  const done = (error: NodeJS.ErrnoException | null) => {
    if (error) onError(error);
  };
  if (gzip) return pipeline(stored, createGunzip(), createGzip(), done);
  return pipeline(stored, createGunzip(), done);
}
