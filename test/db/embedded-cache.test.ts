import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { after, describe, it } from 'node:test';
import { sql } from 'kysely';
import pino from 'pino';
import { openDatabase } from '../../src/db/database.js';
import { migratedDataDir } from '../helpers/test-database.js';

const logger = pino({ level: 'silent' });

describe("the embedded database's buffer cache (FUNIL_EMBEDDED_SHARED_BUFFERS_MB)", () => {
  const dirs: string[] = [];
  after(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

  async function sharedBuffers(embeddedSharedBuffersMb?: number): Promise<string> {
    const dataDir = await migratedDataDir();
    dirs.push(dataDir);
    const database = await openDatabase({ dataDir, poolSize: 1, logger, embeddedSharedBuffersMb });
    try {
      const { rows } = await sql<{ shared_buffers: string }>`show shared_buffers`.execute(database.db.withoutPlugins());
      return rows[0]?.shared_buffers ?? '';
    } finally {
      await database.close();
    }
  }

  it("is 32 MB unless set: PostgreSQL's 128 MB would be held by the process from the start", async () => {
    assert.equal(await sharedBuffers(), '32MB');
  });

  it('is what the setting says', async () => {
    assert.equal(await sharedBuffers(8), '8MB');
  });
});
