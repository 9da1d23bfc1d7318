import { sql } from 'kysely';
import type { Database, Db } from '../db/database.js';

/** Where a run reads its pages (all of them in one snapshot) and where it writes its chunks. */
export interface SnapshotSession {
  /** Runs one page's reads; every page sees the rows as of the same moment. */
  read<T>(work: (reader: Db) => Promise<T>): Promise<T>;
  /** Where chunks and progress go: outside the snapshot when it can be, so readers of the progress see it. */
  readonly writer: Db;
}

/** Thrown when the embedded database's rows changed under an optimistic snapshot: the run starts over. */
export class SnapshotMoved extends Error {
  constructor() {
    super('the rows changed during the export');
  }
}

/** Thrown when another instance runs the export already (PostgreSQL). */
export class ExportBusy extends Error {
  constructor() {
    super('another instance runs this export');
  }
}

/**
 * PostgreSQL: every page read in one REPEATABLE READ, read-only transaction on a connection of its
 * own (one consistent snapshot, however long the export), while the chunks go through the pool's
 * other connections. The transaction holds a lock on the export, so that of several instances
 * resuming exports at their start only one runs it; a crash ends the transaction and frees it.
 * Being read-only, it never takes a transaction id, so however long it lasts it holds back no
 * tenant's change feed (SPEC §14 shows an event once every older writer has ended).
 */
export function postgresSnapshot<T>(
  db: Db,
  exportId: string,
  work: (session: SnapshotSession) => Promise<T>,
): Promise<T> {
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .setAccessMode('read only')
    .execute(async (trx) => {
      const { rows } = await sql<{ locked: boolean }>`
        select pg_try_advisory_xact_lock(hashtextextended(${`funil:export:${exportId}`}, 0)) as locked`.execute(trx);
      if (!rows[0]?.locked) throw new ExportBusy();
      return work({ read: (read) => read(trx), writer: db });
    });
}

/**
 * The embedded database has one connection, so one long transaction would hold every other request
 * for the whole export. Instead each page is read in a short transaction of its own, and is first
 * checked against the change feed: every change of a lead or customer writes its event in the same
 * transaction (SPEC §14), so while no event of the resource has been written in the tenant since
 * the export began, every page shows the rows as they were at that moment: one snapshot. A change
 * meanwhile throws SnapshotMoved, and the run starts over (ExportRuns).
 */
export async function optimisticSnapshot<T>(
  db: Db,
  tenantId: string,
  resource: 'lead' | 'customer',
  work: (session: SnapshotSession) => Promise<T>,
): Promise<T> {
  // PGlite runs one transaction at a time: a later one has a larger id.
  const { rows } = await sql<{ mark: string }>`select pg_current_xact_id()::text as mark`.execute(db);
  const mark = rows[0]?.mark as string;
  return work({
    writer: db,
    read: (read) =>
      db.transaction().execute(async (trx) => {
        const changed = await sql<{ moved: boolean }>`
          select exists (
            select 1 from events where tenant_id = ${tenantId} and xid > ${mark}::xid8 and type like ${`${resource}.%`}
          ) as moved`.execute(trx);
        if (changed.rows[0]?.moved) throw new SnapshotMoved();
        return read(trx);
      }),
  });
}

/**
 * The embedded database's last resort, after optimistic runs kept meeting changes: the whole export
 * in one transaction, chunks included (there is no other connection). Other requests wait for it.
 */
export function singleTransactionSnapshot<T>(db: Db, work: (session: SnapshotSession) => Promise<T>): Promise<T> {
  return db.transaction().execute((trx) => work({ read: (read) => read(trx), writer: trx }));
}

/** The session a run of the export gets on `database`, by backend and by how many optimistic tries failed. */
export function snapshotFor<T>(
  database: Database,
  target: { tenantId: string; id: string; resource: 'lead' | 'customer' },
  optimistic: boolean,
  work: (session: SnapshotSession) => Promise<T>,
): Promise<T> {
  if (database.backend === 'postgres') return postgresSnapshot(database.db, target.id, work);
  return optimistic
    ? optimisticSnapshot(database.db, target.tenantId, target.resource, work)
    : singleTransactionSnapshot(database.db, work);
}
