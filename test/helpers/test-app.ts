import { after, before, describe } from 'node:test';
import type { FastifyInstance, InjectOptions } from 'fastify';
import pino from 'pino';
import { issueToken } from '../../src/admin/issue-token.js';
import { TenantRepository } from '../../src/admin/tenant.repository.js';
import { buildApp } from '../../src/app.js';
import { SCOPES, type Scope } from '../../src/auth/scopes.js';
import { TokenRepository } from '../../src/auth/token.repository.js';
import { type Config, loadConfig } from '../../src/config.js';
import type { Database, Db } from '../../src/db/database.js';
import { buildServices, type Services } from '../../src/services.js';
import { ContractChecker } from './contract.js';
import { feedSettled } from './feed.js';
import { BACKENDS, type Backend, createTestDatabase, skipUnless, type TestDatabase } from './test-database.js';

export const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef0123456789';
export const API = '/api/external/v1';
export const ADMIN_API = '/api/admin/v1';

export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    FUNIL_BOOTSTRAP: 'false',
    FUNIL_ADMIN_TOKEN: ADMIN_TOKEN,
    // Suites send hundreds of requests with one token; the rate-limit suite sets its own limits.
    FUNIL_RATE_LIMIT: '1000000',
    FUNIL_ADMIN_RATE_LIMIT: '1000000',
    // Route suites share two busy cores with other suites: a lagging event loop must not shed their
    // requests. Load shedding has tests of its own.
    FUNIL_MAX_EVENT_LOOP_DELAY_MS: '0',
    // Nor must a queue for the embedded database's one connection, when a suite sends 30 requests at
    // once beside the others: the bounded wait (SPEC §10) has tests of its own, which set it back.
    FUNIL_DB_CONNECT_TIMEOUT_MS: '10000',
    // No webhook dispatcher or worker polling beside every suite: the webhook suites turn them on.
    FUNIL_WEBHOOKS_DELIVER: 'false',
    ...env,
  });
}

export interface TestTenant {
  id: string;
  /** A token with every scope. */
  token: string;
  tokenId: string;
}

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  // biome-ignore lint/suspicious/noExplicitAny: a test reads whatever JSON came back.
  body: any;
  /** The body as it came over the wire. */
  text: string;
}

export interface RequestOptions {
  token?: string | null;
  body?: unknown;
  headers?: Record<string, string>;
  query?: Record<string, string>;
  /**
   * A GET of the external feed first waits for it to settle, as a test means "the feed, now that my
   * writes are in", and a transaction of another test file on the shared server holds events back
   * (SPEC §14). A test of that holding back reads the feed as it stands.
   */
  feedAsItStands?: boolean;
  /** The client's address as the server sees it (inject's default: 127.0.0.1). */
  remoteAddress?: string;
}

/** The production app on a database of its own, with small factories for tenants and tokens. */
export class TestContext {
  #app?: FastifyInstance;
  #testDatabase?: TestDatabase;
  #contract?: ContractChecker;

  constructor(
    readonly backend: Backend,
    private readonly env: Record<string, string> = {},
  ) {}

  get app(): FastifyInstance {
    if (!this.#app) throw new Error('TestContext used before start()');
    return this.#app;
  }

  get db(): Db {
    return this.database.db;
  }

  get database(): Database {
    if (!this.#testDatabase) throw new Error('TestContext used before start()');
    return this.#testDatabase.database;
  }

  async start(): Promise<void> {
    this.#testDatabase = await createTestDatabase(this.backend);
    this.#app = await buildApp({
      config: testConfig(this.env),
      database: this.#testDatabase.database,
      logger: pino({ level: 'silent' }),
    });
    await this.#app.ready();
  }

  async stop(): Promise<void> {
    await this.#app?.close();
    await this.#testDatabase?.destroy();
  }

  /**
   * The app's services built afresh on this context's database, as another instance would have
   * them (their own caches), with the test settings and `env`.
   */
  services(env: Record<string, string> = {}): Services {
    return buildServices({ database: this.database, config: testConfig(env), logger: pino({ level: 'silent' }) });
  }

  async tenant(name = 'Tenant'): Promise<TestTenant> {
    const tenant = await new TenantRepository(this.db).create(name);
    const issued = await this.token(tenant.id, SCOPES);
    return { id: tenant.id, token: issued.token, tokenId: issued.id };
  }

  token(tenantId: string, scopes: readonly Scope[], expiresAt: Date | null = null) {
    return issueToken(new TokenRepository(this.db), { tenantId, name: 'test', scopes, expiresAt });
  }

  /** A call to the external API (`path` under API) with `tenant`'s token. */
  api(
    tenant: TestTenant,
    method: InjectOptions['method'],
    path: string,
    options: Omit<RequestOptions, 'token'> = {},
  ): Promise<Answer> {
    return this.request(method, `${API}${path}`, { token: tenant.token, ...options });
  }

  async request(method: InjectOptions['method'], url: string, options: RequestOptions = {}): Promise<Answer> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    const inject: InjectOptions = { method, url, headers };
    if (options.query) inject.query = options.query;
    if (options.remoteAddress) inject.remoteAddress = options.remoteAddress;
    if (options.body !== undefined) {
      headers['content-type'] ??= 'application/json';
      inject.payload = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    }
    if (method === 'GET' && url.split('?')[0] === `${API}/events` && !options.feedAsItStands)
      await feedSettled(this.db);
    const response = await this.app.inject(inject);
    const contentType = String(response.headers['content-type'] ?? '');
    let body: unknown = response.body;
    if (contentType.startsWith('application/json')) {
      body = response.json();
    }
    this.#contract ??= await ContractChecker.forApp(this.app, JSON.stringify([this.backend, this.env]));
    this.#contract.check(String(method), url, response.statusCode, response.headers, body);
    return { status: response.statusCode, headers: response.headers, body, text: response.body };
  }
}

/**
 * Runs a suite once per backend: PGlite always, PostgreSQL when FUNIL_TEST_DATABASE_URL is set.
 * In CI a missing PostgreSQL is a failure, never a silent skip.
 */
export function describeEachBackend(
  name: string,
  suite: (ctx: TestContext) => void,
  env: Record<string, string> = {},
): void {
  for (const backend of BACKENDS) {
    describe(`${name} [${backend}]`, { skip: skipUnless(backend) }, () => {
      const ctx = new TestContext(backend, env);
      before(() => ctx.start());
      after(() => ctx.stop());
      suite(ctx);
    });
  }
}
