import { once } from 'node:events';
import { createServer } from 'node:net';

/** A port nobody listens on right now (tests and benchmarks start their servers on it). */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  await once(server, 'close');
  if (typeof address !== 'object' || !address) throw new Error('no free port');
  return address.port;
}
