import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it, mock } from 'node:test';
import { issueToken } from '../../src/admin/issue-token.js';
import { TenantRepository } from '../../src/admin/tenant.repository.js';
import { TokenRepository } from '../../src/auth/token.repository.js';
import { TokenAuthenticator } from '../../src/auth/token-authenticator.js';
import { hashToken } from '../../src/auth/token-secret.js';
import type { Db } from '../../src/db/database.js';
import { holdConnection, waitingReaches } from '../helpers/held-connection.js';
import { createPgliteDatabase, type TestDatabase } from '../helpers/test-database.js';

const presented = (token: string) => ({ token, hash: hashToken(token) });
const madeUp = () => `fnl_${randomBytes(32).toString('base64url')}`;

/** Whether the authenticator lets the token in (from its cache, once revoked in the database behind its back). */
async function passes(authenticator: TokenAuthenticator, token: string): Promise<boolean> {
  try {
    await authenticator.authenticate(presented(token), 'leads:read');
    return true;
  } catch {
    return false;
  }
}

describe('the token lookup cache (SPEC §5.4, §10)', () => {
  let store: TestDatabase;
  let db: Db;
  let tenantId: string;
  before(async () => {
    store = await createPgliteDatabase();
    db = store.database.db;
    tenantId = (await new TenantRepository(db).create('Cache')).id;
  });
  after(() => store.destroy());

  const issue = async (count: number) => {
    const tokens = new TokenRepository(db);
    const issued = [];
    for (let i = 0; i < count; i++) {
      issued.push(await issueToken(tokens, { tenantId, name: `t${i}`, scopes: ['leads:read'], expiresAt: null }));
    }
    return issued;
  };
  /** Revoked straight in the database: only a fresh lookup sees it, a cached one does not. */
  const revokeBehindItsBack = (ids: string[]) =>
    db.updateTable('apiTokens').set({ revokedAt: new Date() }).where('id', 'in', ids).execute();

  it('evicts the least recently used token when full, one at a time, never the whole cache', async () => {
    const [a, b, c, d] = await issue(4);
    assert.ok(a && b && c && d);
    const authenticator = new TokenAuthenticator(new TokenRepository(db), { knownTokens: 3, unknownTokens: 10 });
    for (const token of [a, b, c]) assert.ok(await passes(authenticator, token.token));
    await revokeBehindItsBack([a.id, b.id, c.id, d.id]);
    assert.ok(await passes(authenticator, b.token), 'b: cached, and now the most recently used');
    assert.equal(await passes(authenticator, d.token), false, 'd: looked up, found revoked; evicts a');
    assert.ok(await passes(authenticator, b.token), 'b: still cached');
    assert.ok(await passes(authenticator, c.token), 'c: still cached');
    assert.equal(await passes(authenticator, a.token), false, 'a: evicted, looked up again');
  });

  it('keeps made-up tokens apart: however many, they push no real token out', async () => {
    const [a, b] = await issue(2);
    assert.ok(a && b);
    const authenticator = new TokenAuthenticator(new TokenRepository(db), { knownTokens: 2, unknownTokens: 2 });
    for (const token of [a, b]) assert.ok(await passes(authenticator, token.token));
    await revokeBehindItsBack([a.id, b.id]);
    for (let i = 0; i < 20; i++) assert.equal(await passes(authenticator, madeUp()), false);
    assert.ok(await passes(authenticator, a.token), 'still cached');
    assert.ok(await passes(authenticator, b.token), 'still cached');
    assert.ok(authenticator.knowsValid(hashToken(a.token)));
    assert.equal(authenticator.knowsValid(hashToken(madeUp())), false);
  });

  it('ages lookups on a monotonic clock: a wall clock set back does not keep a revoked token alive', async () => {
    const [a] = await issue(1);
    assert.ok(a);
    const authenticator = new TokenAuthenticator(new TokenRepository(db));
    assert.ok(await passes(authenticator, a.token));
    await revokeBehindItsBack([a.id]);
    mock.timers.enable({ apis: ['Date'], now: Date.now() - 3_600_000 });
    try {
      // Past the 2 s a lookup is reused for, by the monotonic clock, while the wall clock went back an hour.
      await new Promise((resolve) => setTimeout(resolve, 2_100));
      assert.equal(await passes(authenticator, a.token), false);
    } finally {
      mock.timers.reset();
    }
  });

  it('after invalidate(), looks every token up again, yet still counts a known one as known until then', async () => {
    const [a] = await issue(1);
    assert.ok(a);
    const authenticator = new TokenAuthenticator(new TokenRepository(db));
    assert.ok(await passes(authenticator, a.token));
    await revokeBehindItsBack([a.id]);
    authenticator.invalidate();
    assert.ok(authenticator.knowsValid(hashToken(a.token)), 'its requests keep their own rate-limit budget');
    assert.equal(await passes(authenticator, a.token), false, 'looked up again: revoked');
    assert.equal(authenticator.knowsValid(hashToken(a.token)), false);
  });

  it('does not keep the answer of a lookup that began before invalidate(): it may predate the change', async () => {
    const [token] = await issue(1);
    assert.ok(token);
    const authenticator = new TokenAuthenticator(new TokenRepository(db));
    const release = await holdConnection(store.database);
    const early = passes(authenticator, token.token);
    await waitingReaches(store.database, 1);
    authenticator.invalidate();
    await release();
    assert.equal(await early, true);
    await revokeBehindItsBack([token.id]);
    assert.equal(await passes(authenticator, token.token), false, 'looked up again, and found revoked');
  });
});
