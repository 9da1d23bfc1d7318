import assert from 'node:assert/strict';
import { it } from 'node:test';
import { createLogger } from '../src/logger.js';

it("the production logger keeps a database error's values out of the log (SPEC §17)", () => {
  const lines: string[] = [];
  const logger = createLogger({ logLevel: 'info' }, { write: (line: string) => void lines.push(line) });
  const error = Object.assign(
    new Error('duplicate key value violates unique constraint "customers_tenant_email_key"'),
    {
      code: '23505',
      detail: 'Key (tenant_id, email)=(0190…, ana@example.com) already exists.',
    },
  );
  logger.error({ err: error, token: 'fnl_secret' }, 'request failed');
  const [line] = lines;
  assert.ok(line);
  assert.ok(!line.includes('ana@example.com'), line);
  assert.ok(!line.includes('fnl_secret'), line);
  const logged = JSON.parse(line);
  assert.equal(logged.err.code, '23505');
  assert.equal(logged.err.detail, '[redacted]');
});
