/**
 * Which source files a request runs through: V8's precise coverage (function counts) taken around
 * one warmed-up `POST /leads` and one first `GET /leads` page on the embedded database, counted by
 * folder. A measure of how far a reader must follow a request (issue 41), not of speed.
 *   npx tsx bench/request-files.ts [--list]
 */
import { Session } from 'node:inspector/promises';
import { fileURLToPath } from 'node:url';
import { API, TestContext } from '../test/helpers/test-app.js';

const SOURCE = fileURLToPath(new URL('../src/', import.meta.url));

interface Coverage {
  result: { url: string; functions: { ranges: { count: number }[] }[] }[];
}

const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });

/** The source files any of whose functions ran since the last reading (a reading resets the counts). */
async function filesRun(): Promise<string[]> {
  const { result } = (await session.post('Profiler.takePreciseCoverage')) as Coverage;
  return result
    .filter((script) => script.url.startsWith('file://'))
    .map((script) => ({ path: fileURLToPath(script.url), ran: script.functions.some((f) => f.ranges[0]?.count) }))
    .filter((script) => script.ran && script.path.startsWith(SOURCE))
    .map((script) => script.path.slice(SOURCE.length))
    .sort();
}

const ctx = new TestContext('pglite');
await ctx.start();
try {
  const tenant = await ctx.tenant('Files');
  const post = () =>
    ctx.app.inject({
      method: 'POST',
      url: `${API}/leads`,
      headers: { authorization: `Bearer ${tenant.token}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ name: 'Ana', email: 'ana@example.com' }),
    });
  const list = () =>
    ctx.app.inject({ method: 'GET', url: `${API}/leads`, headers: { authorization: `Bearer ${tenant.token}` } });
  // Warm: caches filled, modules loaded, timers of the first requests past.
  for (let i = 0; i < 3; i++) await Promise.all([post(), list()]);
  await new Promise((resolve) => setTimeout(resolve, 100));
  for (const [name, request] of [
    ['POST /leads', post],
    ['GET /leads (first page)', list],
  ] as const) {
    await filesRun();
    const answer = await request();
    const files = await filesRun();
    const byFolder = new Map<string, number>();
    for (const file of files) {
      const folder = file.includes('/') ? file.slice(0, file.indexOf('/')) : '(root)';
      byFolder.set(folder, (byFolder.get(folder) ?? 0) + 1);
    }
    const folders = [...byFolder].sort((a, b) => b[1] - a[1]).map(([folder, n]) => `${folder} ${n}`);
    console.log(`${name} → ${answer.statusCode}: ${files.length} files (${folders.join(', ')})`);
    if (process.argv.includes('--list')) for (const file of files) console.log(`  ${file}`);
  }
} finally {
  await ctx.stop();
  session.disconnect();
}
