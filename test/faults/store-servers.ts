import { after, before } from 'node:test';
import { type ServerProcess, startServer } from '../helpers/server-process.js';
import { createStore, type Store } from './stores.js';

/**
 * A suite's store of `backend` (made before its tests, destroyed after), and the server processes
 * it starts on it, each stopped by its PID after the tests: a crash test kills one and starts
 * another on the same data.
 */
export function storeServers(backend: Store['backend']) {
  let store: Store | undefined;
  const servers: ServerProcess[] = [];
  before(async () => {
    store = await createStore(backend);
  });
  after(async () => {
    await Promise.all(servers.map((server) => server.stop(2_000)));
    await store?.destroy();
  });
  const current = (): Store => {
    if (!store) throw new Error('storeServers used before its suite started');
    return store;
  };
  return {
    /** Every lead stored, read from the database directly (store.leads). */
    leads: () => current().leads(),
    async start(): Promise<ServerProcess> {
      const server = await startServer({
        ...current().env,
        FUNIL_RATE_LIMIT: '10000000',
        FUNIL_MAX_EVENT_LOOP_DELAY_MS: '0',
      });
      servers.push(server);
      return server;
    },
  };
}
