import { issueToken } from './admin/issue-token.js';
import { TenantRepository } from './admin/tenant.repository.js';
import { SCOPES } from './auth/scopes.js';
import { TokenRepository } from './auth/token.repository.js';
import type { Db } from './db/database.js';
import { migrateToLatest, withStartupLock } from './db/migrate.js';
import { PipelineRepository } from './pipelines/pipeline.repository.js';
import { stagesOf } from './pipelines/pipeline.types.js';

export interface PreparedDatabase {
  migrations: string[];
  /** The demo token, present only on the start that created the demo tenant. */
  demoToken?: { token: string; expiresAt: Date };
}

/** A token printed to a terminal (and maybe a shared log) should not open the tenant forever. */
const DEMO_TOKEN_LIFETIME_MS = 30 * 24 * 60 * 60_000;

/**
 * Brings the schema up to date, gives each tenant without a pipeline its first one from
 * `leadStatuses` (FUNIL_LEAD_STATUSES: the tenants made before pipelines, SPEC §20; a tenant made
 * later gets it on its first request, PipelineCatalog) and, on a first start, creates tenant `Demo`
 * with an all-scope token valid for 30 days (SPEC §9). Runs under the start-up lock, so
 * concurrent starts do it once.
 */
export function prepareDatabase(
  db: Db,
  options: { bootstrap: boolean; leadStatuses?: readonly string[] },
): Promise<PreparedDatabase> {
  return withStartupLock(db, async (conn) => {
    const migrations = await migrateToLatest(conn);
    if (options.leadStatuses) await new PipelineRepository().ensureFirstOfAll(conn, stagesOf(options.leadStatuses));
    if (!options.bootstrap) return { migrations };
    const demoToken = await conn.transaction().execute(async (trx) => {
      const tenants = new TenantRepository(trx);
      if (!(await tenants.isEmpty())) return undefined;
      const tenant = await tenants.create('Demo');
      const expiresAt = new Date(Date.now() + DEMO_TOKEN_LIFETIME_MS);
      const issued = await issueToken(new TokenRepository(trx), {
        tenantId: tenant.id,
        name: 'demo token (all scopes)',
        scopes: SCOPES,
        expiresAt,
      });
      return { token: issued.token, expiresAt };
    });
    return demoToken ? { migrations, demoToken } : { migrations };
  });
}
