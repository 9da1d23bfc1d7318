import assert from 'node:assert/strict';
import { chmod, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import pino from 'pino';
import { openDatabase } from '../../src/db/database.js';
import { scratchDir } from '../helpers/scratch-dir.js';

const logger = pino({ level: 'silent' });
const modeOf = async (path: string) => (await stat(path)).mode & 0o777;

describe('the embedded data directory (SPEC §11, §17: personal data)', () => {
  const roots: string[] = [];
  after(() => Promise.all(roots.map((root) => rm(root, { recursive: true, force: true }))));
  const root = async () => {
    const dir = await scratchDir('funil-datadir-');
    roots.push(dir);
    return dir;
  };

  it('is created readable by its owner alone (0700), parents included', async () => {
    const dataDir = join(await root(), 'nested', 'data');
    const database = await openDatabase({ dataDir, poolSize: 1, logger });
    await database.close();
    assert.equal(await modeOf(dataDir), 0o700);
    assert.equal(await modeOf(join(dataDir, '..')), 0o700);
  });

  it('is narrowed to 0700 when an earlier start left it open to others', async () => {
    const dataDir = await root();
    await chmod(dataDir, 0o755);
    const database = await openDatabase({ dataDir, poolSize: 1, logger });
    await database.close();
    assert.equal(await modeOf(dataDir), 0o700);
  });
});
