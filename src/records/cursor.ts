import { createHmac, timingSafeEqual } from 'node:crypto';
import type { CursorPosition } from '../db/keyset.js';
import { validationFailed } from '../shared/errors.js';
import { fieldMessage, type Text } from '../shared/messages.js';

const MAC_BYTES = 16;

const invalidCursor: Text = {
  pt: 'cursor inválido: use o cursor da página anterior, com a mesma ordenação e os mesmos filtros',
  en: 'invalid cursor: use the cursor of the previous page, with the same sort and filters',
};

/**
 * Opaque, signed list cursors (SPEC §6). The signature covers the position and the query it came
 * from (tenant, sort, filters), so a cursor that is forged, truncated, or replayed with another
 * query or by another tenant is refused with a 400 rather than silently paging something else.
 */
export class CursorCodec {
  #key: Promise<Buffer> | undefined;

  /** `loadKey` runs at the first use rather than at start (and again after a failure). */
  constructor(private readonly loadKey: () => Promise<Buffer>) {}

  async encode(position: CursorPosition, binding: string): Promise<string> {
    const payload = Buffer.from(JSON.stringify([position.value, position.id])).toString('base64url');
    return `${payload}.${await this.#mac(payload, binding)}`;
  }

  async decode(cursor: string, binding: string): Promise<CursorPosition> {
    const [payload, mac, extra] = cursor.split('.');
    if (!payload || !mac || extra !== undefined) throw cursorError();
    // Compared as text, not as decoded bytes: base64url decoding skips stray characters and ignores
    // the spare bits of the last one, so several spellings decode to the same MAC.
    const expected = Buffer.from(await this.#mac(payload, binding));
    const given = Buffer.from(mac);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw cursorError();
    let decoded: unknown;
    try {
      decoded = JSON.parse(Buffer.from(payload, 'base64url').toString());
    } catch {
      throw cursorError();
    }
    if (!Array.isArray(decoded) || decoded.length !== 2 || typeof decoded[1] !== 'string') throw cursorError();
    const [value, id] = decoded as [unknown, string];
    if (value !== null && typeof value !== 'string' && typeof value !== 'number') throw cursorError();
    return { value, id };
  }

  async #mac(payload: string, binding: string): Promise<string> {
    this.#key ??= this.loadKey().catch((error: unknown) => {
      this.#key = undefined;
      throw error;
    });
    const key = await this.#key;
    const mac = createHmac('sha256', key).update(binding).update('\n').update(payload).digest();
    return mac.subarray(0, MAC_BYTES).toString('base64url');
  }
}

function cursorError() {
  return validationFailed([{ field: 'cursor', message: fieldMessage('cursor', invalidCursor) }]);
}

/** A stable text for what a cursor is bound to: the same query gives the same binding. */
export function cursorBinding(tenantId: string, sort: string, filters: object): string {
  const entries = Object.entries(filters)
    .filter(([, value]) => value !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : 1));
  return JSON.stringify([tenantId, sort, entries]);
}
