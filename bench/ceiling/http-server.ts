/**
 * The HTTP ceiling: a bare node:http server that reads each request and answers it with a fixed
 * body of the size the real servers send for that request (rendered once from the seeded data,
 * given in the JSON file CEILING_BODIES). No routing library, no database, no JSON work per request.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { CeilingBodies } from '../throughput/fixture.js';

const bodies = JSON.parse(readFileSync(required('CEILING_BODIES'), 'utf8')) as CeilingBodies;
const encoded = {
  health: Buffer.from('{"status":"ok"}'),
  leadList: Buffer.from(bodies.leadList),
  lead: Buffer.from(bodies.lead),
  createdLead: Buffer.from(bodies.createdLead),
  customer: Buffer.from(bodies.customer),
  notFound: Buffer.from('{"success":false}'),
};

const LEAD = /^\/api\/external\/v1\/leads\/[0-9a-f-]{36}$/;
const LEAD_STATUS = /^\/api\/external\/v1\/leads\/[0-9a-f-]{36}\/status$/;
const CUSTOMER = /^\/api\/external\/v1\/customers\/[0-9a-f-]{36}$/;

function answer(method: string | undefined, url: string | undefined): [number, Buffer] {
  const path = url?.split('?', 1)[0] ?? '';
  if (method === 'GET' && path === '/health') return [200, encoded.health];
  if (method === 'GET' && path === '/api/external/v1/leads') return [200, encoded.leadList];
  if (method === 'POST' && path === '/api/external/v1/leads') return [201, encoded.createdLead];
  if (method === 'GET' && LEAD.test(path)) return [200, encoded.lead];
  if (method === 'PUT' && LEAD_STATUS.test(path)) return [200, encoded.lead];
  if (method === 'GET' && CUSTOMER.test(path)) return [200, encoded.customer];
  return [404, encoded.notFound];
}

const server = createServer({ keepAliveTimeout: 65_000 }, (request, response) => {
  // Read the whole body, as any real server must, before answering.
  request.resume();
  request.on('end', () => {
    const [status, body] = answer(request.method, request.url);
    response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
    response.end(body);
  });
});
server.listen(Number(process.env.PORT ?? 3200), process.env.HOST ?? '127.0.0.1');
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  });
}

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
}
