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

  it('leaves /metrics open and CORS off by default (SPEC §12)', () => {
    const config = loadConfig({});
    assert.equal(config.metricsToken, undefined);
    assert.deepEqual(config.corsOrigins, []);
    assert.ok(Object.isFrozen(config.corsOrigins));
  });

  it('reads FUNIL_METRICS_TOKEN: 32 or more printable characters, other than the admin token', () => {
    const token = 'm'.repeat(40);
    assert.equal(loadConfig({ FUNIL_METRICS_TOKEN: ` ${token} ` }).metricsToken, token);
    assert.equal(loadConfig({ FUNIL_METRICS_TOKEN: '' }).metricsToken, undefined);
    for (const bad of ['m'.repeat(31), `${'m'.repeat(20)} ${'m'.repeat(20)}`, `${'m'.repeat(32)}é`]) {
      assert.throws(() => loadConfig({ FUNIL_METRICS_TOKEN: bad }), errorNaming('FUNIL_METRICS_TOKEN'), bad);
    }
    assert.throws(
      () => loadConfig({ FUNIL_METRICS_TOKEN: ADMIN_TOKEN, FUNIL_ADMIN_TOKEN: ADMIN_TOKEN }),
      errorNaming('FUNIL_METRICS_TOKEN'),
    );
  });

  it('reads FUNIL_CORS_ORIGINS as a comma list of exact origins, trimmed, without repeats', () => {
    assert.deepEqual(
      loadConfig({ FUNIL_CORS_ORIGINS: ' https://www.example.com, http://localhost:5173 ,https://www.example.com,' })
        .corsOrigins,
      ['https://www.example.com', 'http://localhost:5173'],
    );
    assert.deepEqual(loadConfig({ FUNIL_CORS_ORIGINS: '*' }).corsOrigins, ['*']);
    assert.deepEqual(loadConfig({ FUNIL_CORS_ORIGINS: ' ' }).corsOrigins, []);
  });

  it('refuses FUNIL_CORS_ORIGINS entries that a browser would never send as an Origin', () => {
    for (const value of [
      'https://www.example.com/',
      'https://www.example.com/form',
      'https://WWW.example.com',
      'www.example.com',
      'ftp://example.com',
      'null',
      'https://example.com:443',
      '*,https://www.example.com',
      ',',
    ]) {
      assert.throws(() => loadConfig({ FUNIL_CORS_ORIGINS: value }), errorNaming('FUNIL_CORS_ORIGINS'), value);
    }
  });

  it('trusts X-Forwarded-For from nobody by default, else from a hop count or listed proxies, never from everyone (SPEC §10)', () => {
    assert.equal(loadConfig({}).trustProxy, false);
    assert.equal(loadConfig({ FUNIL_TRUST_PROXY: 'false' }).trustProxy, false);
    assert.equal(loadConfig({ FUNIL_TRUST_PROXY: '2' }).trustProxy, 2);
    assert.deepEqual(loadConfig({ FUNIL_TRUST_PROXY: '10.0.0.0/8, 127.0.0.1,::1,fd00::/8' }).trustProxy, [
      '10.0.0.0/8',
      '127.0.0.1',
      '::1',
      'fd00::/8',
    ]);
    for (const value of ['true', 'yes', '*', '10.0.0.0/33', 'proxy.internal', '10.0.0.1/8/8']) {
      assert.throws(() => loadConfig({ FUNIL_TRUST_PROXY: value }), errorNaming('FUNIL_TRUST_PROXY'), value);
    }
    assert.throws(() => loadConfig({ FUNIL_TRUST_PROXY: 'true' }), /any client pick its own address/);
  });

  it("keeps every answer within SPEC §2's 5 s by default: request 4 s, statement 3 s, connection wait 1 s (§10)", () => {
    const config = loadConfig({});
    assert.equal(config.requestTimeoutMs, 4_000);
    assert.equal(config.databaseStatementTimeoutMs, 3_000);
    assert.equal(config.databaseConnectTimeoutMs, 1_000);
    assert.equal(config.tenantConcurrency, undefined, 'meaning half the pool, at least 2');
    assert.equal(config.tenantQueue, 256, "requests that may wait in a tenant's line (SPEC §10)");
    assert.equal(config.requestConcurrency, undefined, 'meaning the pool, 4 on the embedded database');
    assert.equal(config.listScanRows, undefined, 'meaning 50,000 on the embedded database, no bound on PostgreSQL');
    assert.equal(config.maxEventLoopDelayMs, 500);
    assert.equal(config.maxHeapUsedMb, undefined, 'meaning 90 % of the old generation');
  });

  it('reads the timeouts and the load-shedding thresholds, and refuses nonsense naming the variable', () => {
    const config = loadConfig({
      FUNIL_REQUEST_TIMEOUT_MS: '2500',
      FUNIL_DB_STATEMENT_TIMEOUT_MS: '20000',
      FUNIL_DB_CONNECT_TIMEOUT_MS: '1500',
      FUNIL_TENANT_CONCURRENCY: '12',
      FUNIL_TENANT_QUEUE: '1000',
      FUNIL_REQUEST_CONCURRENCY: '64',
      FUNIL_LIST_SCAN_ROWS: '200000',
      FUNIL_MAX_EVENT_LOOP_DELAY_MS: '0',
      FUNIL_MAX_HEAP_USED_MB: '512',
    });
    assert.equal(config.requestTimeoutMs, 2_500);
    assert.equal(config.databaseStatementTimeoutMs, 20_000);
    assert.equal(config.databaseConnectTimeoutMs, 1_500);
    assert.equal(config.tenantConcurrency, 12);
    assert.equal(config.tenantQueue, 1_000);
    assert.equal(config.requestConcurrency, 64);
    assert.equal(config.listScanRows, 200_000);
    assert.equal(config.maxEventLoopDelayMs, 0);
    assert.equal(config.maxHeapUsedMb, 512);
    for (const [variable, value] of [
      ['FUNIL_REQUEST_TIMEOUT_MS', '0'],
      ['FUNIL_DB_STATEMENT_TIMEOUT_MS', '5s'],
      ['FUNIL_DB_CONNECT_TIMEOUT_MS', '-1'],
      ['FUNIL_MAX_EVENT_LOOP_DELAY_MS', '1.5'],
      ['FUNIL_MAX_HEAP_USED_MB', 'lots'],
      ['FUNIL_TENANT_CONCURRENCY', '0'],
      ['FUNIL_TENANT_QUEUE', '-1'],
      ['FUNIL_REQUEST_CONCURRENCY', '0'],
      ['FUNIL_LIST_SCAN_ROWS', '5'],
    ] as const) {
      assert.throws(() => loadConfig({ [variable]: value }), errorNaming(variable), value);
    }
  });

  it('gives the embedded database a 32 MB buffer cache unless FUNIL_EMBEDDED_SHARED_BUFFERS_MB says otherwise', () => {
    assert.equal(loadConfig({}).embeddedSharedBuffersMb, 32);
    assert.equal(loadConfig({ FUNIL_EMBEDDED_SHARED_BUFFERS_MB: '256' }).embeddedSharedBuffersMb, 256);
    for (const value of ['0', '32MB', '2048']) {
      assert.throws(
        () => loadConfig({ FUNIL_EMBEDDED_SHARED_BUFFERS_MB: value }),
        errorNaming('FUNIL_EMBEDDED_SHARED_BUFFERS_MB'),
        value,
      );
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
