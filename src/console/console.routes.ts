import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';

/** Where the console's own files are: `console/` beside `src/` and `dist/`. */
const CONSOLE_DIR = fileURLToPath(new URL('../../console/', import.meta.url));

/**
 * A strict policy (SPEC §18): scripts and styles only from Funil's own files, no inline script,
 * no eval; the API on the same origin; nothing from elsewhere, no framing.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Third-party files the console loads, each served from node_modules under a name of its own. */
const VENDOR: Readonly<Record<string, () => URL>> = {
  // Preact, its hooks and htm in one ES module, by the Preact team: a UI without a build step.
  'preact.js': () => new URL(import.meta.resolve('htm/preact/standalone')),
  // Chart.js's UMD build, beside its ES one: `window.Chart`, nothing for the browser to resolve.
  'chart.umd.js': () => new URL('chart.umd.js', import.meta.resolve('chart.js')),
};

/**
 * `/console` (SPEC §18): a web console for a tenant's people, every asset served by Funil itself.
 * It signs in with a tenant token, kept in the tab's sessionStorage, and calls the public API.
 */
export async function serveConsole(app: FastifyInstance): Promise<void> {
  const vendor = new Map<string, Buffer>();
  for (const [name, location] of Object.entries(VENDOR)) vendor.set(name, await readFile(location()));
  const index = await readFile(new URL('../../console/index.html', import.meta.url));

  await app.register(async (scope) => {
    scope.addHook('onSend', async (_request, reply, payload) => {
      reply.header('content-security-policy', CONTENT_SECURITY_POLICY);
      reply.header('x-content-type-options', 'nosniff');
      reply.header('referrer-policy', 'no-referrer');
      return payload;
    });
    scope.get('/console', { schema: { hide: true } }, async (_request, reply) =>
      reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(index),
    );
    scope.get('/console/vendor/:name', { schema: { hide: true } }, async (request, reply) => {
      const file = vendor.get((request.params as { name: string }).name);
      if (!file) return reply.callNotFound();
      return reply.type('text/javascript; charset=utf-8').header('cache-control', 'public, max-age=3600').send(file);
    });
    await scope.register(fastifyStatic, {
      root: CONSOLE_DIR,
      prefix: '/console/',
      decorateReply: false,
      index: false,
      // Revalidated on every load (ETag): after an upgrade, old and new modules never mix.
      cacheControl: true,
      maxAge: 0,
      // Dot segments, however encoded, name nothing here: a 404, not send's refusal (which would be a 500).
      allowedPath: (path, _root, request) => path !== '/index.html' && !/\.\.|%2e/i.test(`${path} ${request.url}`),
    });
  });
}
