import { chmod, mkdir, stat } from 'node:fs/promises';
import type { Logger } from 'pino';

/** Owner only: the directory holds personal data and the key that signs list cursors. */
const PRIVATE = 0o700;

/**
 * Creates the embedded database's directory readable by its owner alone, and narrows one that an
 * earlier version (or a permissive umask) left open to the group or to everyone.
 */
export async function preparePrivateDir(dir: string, logger: Logger): Promise<void> {
  await mkdir(dir, { recursive: true, mode: PRIVATE });
  const { mode, uid } = await stat(dir);
  if ((mode & 0o077) === 0) return;
  if (typeof process.getuid === 'function' && uid !== process.getuid()) {
    logger.warn({ dataDir: dir }, 'the data directory is readable by others and owned by another user: not changed');
    return;
  }
  await chmod(dir, PRIVATE);
  logger.warn({ dataDir: dir, was: (mode & 0o777).toString(8) }, 'the data directory was readable by others: now 700');
}
