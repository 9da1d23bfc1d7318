import { statfsSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const SHARED_MEMORY = '/dev/shm';
const TMPFS_MAGIC = 0x01021994;
/** A test file holds a few 40 MB data directories at once, and two files run side by side. */
const ROOM_NEEDED_BYTES = 2 * 1024 ** 3;

/**
 * Where tests put their data directories: in memory when the machine has a roomy tmpfs and no
 * `TMPDIR` was chosen, else the system's temporary directory. The embedded database writes and
 * syncs its files at every commit; on a disk that cost the PGlite suites a fifth of their time.
 * A process killed by a test leaves its files in the page cache either way, so what the crash
 * tests prove is the same.
 */
function scratchRoot(): string {
  if (process.env.TMPDIR) return tmpdir();
  try {
    const { type, bavail, bsize } = statfsSync(SHARED_MEMORY);
    if (type === TMPFS_MAGIC && bavail * bsize >= ROOM_NEEDED_BYTES) return SHARED_MEMORY;
  } catch {
    // No /dev/shm here (macOS, some containers).
  }
  return tmpdir();
}

const root = scratchRoot();

/** A new, empty directory of the test's own, named `prefix` and a random tail. */
export function scratchDir(prefix: string): Promise<string> {
  return mkdtemp(join(root, prefix));
}
