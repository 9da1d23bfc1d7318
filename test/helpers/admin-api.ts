import type { ServerProcess } from './server-process.js';

/** The admin token of suites that start real server processes (FUNIL_ADMIN_TOKEN). */
export const PROCESS_ADMIN_TOKEN = 'instances-admin-token-0123456789abcdefghij';

export const adminAuth = { authorization: `Bearer ${PROCESS_ADMIN_TOKEN}`, 'content-type': 'application/json' };

/** A new tenant, made through `server`'s admin API, and a token of it with `scopes`. */
export async function tenantWithToken(
  server: Pick<ServerProcess, 'url'>,
  name: string,
  scopes: readonly string[],
): Promise<{ id: string; token: string }> {
  const tenant = (await (
    await fetch(`${server.url}/api/admin/v1/tenants`, {
      method: 'POST',
      headers: adminAuth,
      body: JSON.stringify({ name }),
    })
  ).json()) as { id: string };
  return (await (
    await fetch(`${server.url}/api/admin/v1/tenants/${tenant.id}/tokens`, {
      method: 'POST',
      headers: adminAuth,
      body: JSON.stringify({ name: 'sync', scopes }),
    })
  ).json()) as { id: string; token: string };
}
