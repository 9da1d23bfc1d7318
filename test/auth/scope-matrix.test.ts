import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import { SCOPES, type Scope } from '../../src/auth/scopes.js';
import { API, describeEachBackend, type TestTenant } from '../helpers/test-app.js';

interface Operation {
  method: string;
  path: string;
  /** Alternatives: a token may call it when it holds every scope of one of them. */
  needs: string[][];
}

const NO_SUCH_ID = '01890000-0000-7000-8000-000000000000';

/** Every operation of the external API, from the OpenAPI document the routes generate: a new route cannot skip this test. */
function operationsOf(document: {
  paths: Record<string, Record<string, { security?: Record<string, string[]>[]; description?: string }>>;
}): Operation[] {
  const found: Operation[] = [];
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      const needs = (operation.security ?? []).map((requirement) => Object.values(requirement).flat());
      assert.ok(needs.length > 0, `${method} ${path} declares no security`);
      found.push({ method: method.toUpperCase(), path, needs });
      // SPEC §5.6: the upsert of a create or a batch needs other scopes, which its description names.
      const upsert = /With `upsert=`, needs (.+) instead\./.exec(operation.description ?? '')?.[1];
      if (upsert)
        found.push({
          method: method.toUpperCase(),
          path: `${path}?upsert=email`,
          needs: [[...upsert.matchAll(/`([a-z]+:[a-z]+)`/g)].map((m) => m[1] as string)],
        });
    }
  }
  return found;
}

const allowed = (operation: Operation, held: readonly string[]) =>
  operation.needs.some((scopes) => scopes.every((scope) => held.includes(scope)));

/**
 * SPEC §5: for every route and every scope, a token holding only that scope is refused (403) when
 * the route needs another, and gets past the scope check (any other answer) when it needs that one.
 */
describeEachBackend('the scope matrix: every route, every scope (SPEC §5, §15)', (ctx) => {
  let tenant: TestTenant;
  let operations: Operation[];
  const tokens = new Map<Scope, string>();

  before(async () => {
    tenant = await ctx.tenant();
    for (const scope of SCOPES) tokens.set(scope, (await ctx.token(tenant.id, [scope])).token);
    const document = await ctx.request('GET', `${API}/openapi.json`);
    operations = operationsOf(document.body);
    assert.ok(operations.length > 30, `${operations.length} operations`);
  });

  it('answers each single-scope token 403 exactly where the route needs another scope', async () => {
    const wrong: string[] = [];
    for (const operation of operations) {
      const url = `${API}${operation.path
        .replace('{id}', NO_SUCH_ID)
        .replace('{deliveryId}', NO_SUCH_ID)
        .replace('{resource}', 'lead')
        .replace('{key}', 'not_defined')}`;
      const body = operation.method === 'POST' || operation.method === 'PUT' ? {} : undefined;
      for (const scope of SCOPES) {
        const answer = await ctx.request(operation.method, url, {
          token: tokens.get(scope) as string,
          body,
          headers: { 'accept-language': 'en' },
        });
        const refusedForScope = answer.status === 403 && /lacks the required scope/.test(answer.body?.error ?? '');
        if (allowed(operation, [scope]) === refusedForScope) {
          wrong.push(
            `${operation.method} ${operation.path} with ${scope}: ${answer.status} ${answer.body?.error ?? ''}`,
          );
        }
      }
    }
    assert.deepEqual(wrong, []);
  });
});
