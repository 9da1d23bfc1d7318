import { randomBytes } from 'node:crypto';
import type { Db } from './database.js';

/**
 * A secret shared by every instance on one database and kept across restarts: made once by
 * whichever instance asks first, then read by all.
 */
export async function appSecret(db: Db, name: string): Promise<Buffer> {
  await db
    .insertInto('appSecrets')
    .values({ name, value: randomBytes(32).toString('base64url') })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  const row = await db.selectFrom('appSecrets').select('value').where('name', '=', name).executeTakeFirstOrThrow();
  return Buffer.from(row.value, 'base64url');
}
