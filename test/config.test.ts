import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, DEFAULT_LEAD_STATUSES, loadConfig } from '../src/config.js';

const ADMIN_TOKEN = 'a'.repeat(32);

describe('loadConfig', () => {
  it('applies the documented defaults to an empty environment (SPEC §11, §12, §3)', () => {
    const config = loadConfig({});
    assert.equal(config.port, 3000);
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.dataDir, resolve('./data'));
    assert.equal(config.databaseUrl, undefined);
    assert.equal(config.adminToken, undefined);
    assert.equal(config.bootstrap, true);
    assert.equal(config.nodeEnv, 'development');
    assert.deepEqual(config.leadStatuses, ['new', 'contacted', 'qualified', 'proposal', 'negotiation', 'won', 'lost']);
    assert.deepEqual(config.leadStatuses, [...DEFAULT_LEAD_STATUSES]);
  });

  it('returns a frozen config (STYLE: parsed once, passed in)', () => {
    const config = loadConfig({});
    assert.ok(Object.isFrozen(config));
    assert.ok(Object.isFrozen(config.leadStatuses));
  });

  it('treats empty and blank variables as unset', () => {
    const config = loadConfig({ PORT: '', HOST: '  ', FUNIL_ADMIN_TOKEN: '', DATABASE_URL: '' });
    assert.equal(config.port, 3000);
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.adminToken, undefined);
    assert.equal(config.databaseUrl, undefined);
  });

  it('reads PORT, HOST, FUNIL_DATA_DIR and DATABASE_URL (SPEC §11, §12)', () => {
    const config = loadConfig({
      PORT: '8080',
      HOST: '0.0.0.0',
      FUNIL_DATA_DIR: 'var/funil',
      DATABASE_URL: 'postgres://u@db:5432/funil',
    });
    assert.equal(config.port, 8080);
    assert.equal(config.host, '0.0.0.0');
    assert.equal(config.dataDir, resolve('var/funil'));
    assert.equal(config.databaseUrl, 'postgres://u@db:5432/funil');
  });

  it('does not bootstrap in production, and FUNIL_BOOTSTRAP decides when set (SPEC §9)', () => {
    assert.equal(loadConfig({ NODE_ENV: 'production' }).bootstrap, false);
    assert.equal(loadConfig({ NODE_ENV: 'test' }).bootstrap, true);
    assert.equal(loadConfig({ FUNIL_BOOTSTRAP: 'false' }).bootstrap, false);
    assert.equal(loadConfig({ FUNIL_BOOTSTRAP: 'FALSE' }).bootstrap, false);
    assert.equal(loadConfig({ FUNIL_BOOTSTRAP: '0' }).bootstrap, false);
    assert.equal(loadConfig({ NODE_ENV: 'production', FUNIL_BOOTSTRAP: 'true' }).bootstrap, true);
    assert.throws(() => loadConfig({ FUNIL_BOOTSTRAP: 'maybe' }), errorNaming('FUNIL_BOOTSTRAP'));
  });

  it('accepts a FUNIL_ADMIN_TOKEN of 32 characters or more and refuses a shorter one (SPEC §9)', () => {
    assert.equal(loadConfig({ FUNIL_ADMIN_TOKEN: ADMIN_TOKEN }).adminToken, ADMIN_TOKEN);
    assert.throws(() => loadConfig({ FUNIL_ADMIN_TOKEN: 'a'.repeat(31) }), errorNaming('FUNIL_ADMIN_TOKEN'));
    assert.throws(() => loadConfig({ FUNIL_ADMIN_TOKEN: 'short' }), errorNaming('FUNIL_ADMIN_TOKEN'));
  });

  it('refuses a PORT that is not an integer from 0 to 65535, naming PORT (SPEC §12)', () => {
    for (const port of ['abc', '3000x', '-1', '65536', '80.5', '1e3']) {
      assert.throws(() => loadConfig({ PORT: port }), errorNaming('PORT'), port);
    }
  });

  it('reads FUNIL_LEAD_STATUSES as a comma list, trimmed, without repeats (SPEC §3)', () => {
    assert.deepEqual(loadConfig({ FUNIL_LEAD_STATUSES: 'a,b,c' }).leadStatuses, ['a', 'b', 'c']);
    assert.deepEqual(loadConfig({ FUNIL_LEAD_STATUSES: ' open , in_progress ,closed-won,' }).leadStatuses, [
      'open',
      'in_progress',
      'closed-won',
    ]);
    assert.deepEqual(loadConfig({ FUNIL_LEAD_STATUSES: 'new,new,won' }).leadStatuses, ['new', 'won']);
    assert.deepEqual(loadConfig({ FUNIL_LEAD_STATUSES: '' }).leadStatuses, [...DEFAULT_LEAD_STATUSES]);
  });

  it('refuses FUNIL_LEAD_STATUSES with bad values (SPEC §3)', () => {
    for (const value of ['New,won', 'a b', 'ganho!', 'ação', ',', ' , ', 'x'.repeat(51)]) {
      assert.throws(() => loadConfig({ FUNIL_LEAD_STATUSES: value }), errorNaming('FUNIL_LEAD_STATUSES'), value);
    }
  });
});

function errorNaming(variable: string) {
  return (error: unknown) => {
    assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${String(error)}`);
    assert.match(error.message, new RegExp(`\\b${variable}\\b`));
    return true;
  };
}
