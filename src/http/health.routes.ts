import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import type { Database } from '../db/database.js';
import { serviceUnavailable } from '../shared/errors.js';

const Status = Type.Object({ status: Type.String() }, { additionalProperties: false });

/** Probes for orchestrators: no auth, no rate limit. `/health` never touches the database. */
export const healthRoutes: FastifyPluginAsync<{ database: Database }> = async (app, { database }) => {
  app.get(
    '/health',
    { schema: { hide: true, response: { 200: Status } }, config: { public: true, neverShed: true } },
    async () => ({
      status: 'ok',
    }),
  );
  app.get('/ready', { schema: { hide: true, response: { 200: Status } }, config: { public: true } }, async () => {
    if (!(await database.ping(2_000))) throw serviceUnavailable();
    return { status: 'ready' };
  });
};
