import { mkdir, open, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';

export interface DataDirLock {
  release(): Promise<void>;
}

export class DataDirLockedError extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(
      `The data directory ${dataDir} is in use by another Funil process (PID ${pid}). ` +
        'Embedded mode allows one server per directory: stop that process, choose another FUNIL_DATA_DIR, ' +
        'or set DATABASE_URL to run several instances on PostgreSQL.',
    );
  }
}

const LOCK_FILE = 'funil.lock';

/**
 * PGlite has no lock of its own, and two processes on one directory corrupt it.
 * The lock file holds the owner's PID; a lock whose process is gone is stale and taken over.
 */
export async function acquireDataDirLock(dataDir: string): Promise<DataDirLock> {
  await mkdir(dataDir, { recursive: true });
  const path = join(dataDir, LOCK_FILE);
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      const handle = await open(path, 'wx');
      await handle.writeFile(`${process.pid}\n`);
      await handle.sync();
      await handle.close();
      return { release: () => releaseIfOwned(path) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const owner = await readOwner(path);
    if (owner !== undefined && owner !== process.pid && isAlive(owner)) {
      throw new DataDirLockedError(dataDir, owner);
    }
    if (owner === process.pid) throw new DataDirLockedError(dataDir, owner);
    await rm(path, { force: true });
  }
  throw new Error(`Could not take the lock ${path}`);
}

async function releaseIfOwned(path: string): Promise<void> {
  if ((await readOwner(path)) === process.pid) await rm(path, { force: true });
}

async function readOwner(path: string): Promise<number | undefined> {
  try {
    const pid = Number.parseInt(await readFile(path, 'utf8'), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
