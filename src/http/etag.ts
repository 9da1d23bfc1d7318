import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { ExpectedVersions } from '../db/precondition.js';

/** SPEC §8: the ETag of a record is its version, as a strong entity tag. */
export function setEtag(reply: FastifyReply, record: { version: number }): void {
  reply.header('etag', etagOf(record));
}

export function etagOf(record: { version: number }): string {
  return `"${record.version}"`;
}

const STRONG_TAG = /^"(\d{1,9})"$/;

/**
 * The versions an `If-Match` names. `*` (or no header) sets no condition beyond existence;
 * weak tags never match (If-Match compares strongly, RFC 9110 §13.1.1).
 */
export function expectedVersions(request: FastifyRequest): ExpectedVersions {
  return versionsOfIfMatch(request.headers['if-match']);
}

/** The versions an If-Match value names (see expectedVersions). */
export function versionsOfIfMatch(header: string | undefined): ExpectedVersions {
  if (header === undefined || header.trim() === '*') return undefined;
  const versions: number[] = [];
  for (const tag of header.split(',')) {
    const match = STRONG_TAG.exec(tag.trim());
    if (match) versions.push(Number(match[1]));
  }
  return versions;
}

/** Documents If-Match on the routes that honour it; any other header passes. */
export const IfMatchHeaders = Type.Object({
  'if-match': Type.Optional(
    Type.String({ description: 'The ETag last read: the write applies only if the record is still in that version.' }),
  ),
});
