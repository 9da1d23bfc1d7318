import { v7 } from 'uuid';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Time-ordered UUIDv7 (SPEC §1.5): new rows land at the right edge of the B-tree. */
export function newId(): string {
  return v7();
}

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}
