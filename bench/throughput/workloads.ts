/** The benchmark's workloads: the same request stream for every HTTP target. */

export const WORKLOADS = {
  W1: 'create a lead (POST /leads)',
  W2: 'list 100 leads (GET /leads)',
  W3: 'status of a random lead (PUT /leads/:id/status)',
  W4: 'a customer by id (GET /customers/:id)',
  W5: 'mixed: 80 % reads, 20 % writes',
  W6: 'create 100 leads in one batch (POST /leads/batch)',
  W7: 'upsert a lead by e-mail, half new, half just posted (POST /leads?upsert=email)',
  W8: 'list 100 leads through MCP (POST /mcp, tools/call search_leads)',
  W9: 'create a lead through MCP (POST /mcp, tools/call create_lead)',
} as const;

export type WorkloadId = keyof typeof WORKLOADS;
export const WORKLOAD_IDS = Object.keys(WORKLOADS) as WorkloadId[];
/**
 * Workloads of SPEC §13 and §19 run on Funil's targets only: the figure asked of them is against
 * Funil's own REST requests (W1, W2) on the same target, in the same round.
 */
export const FUNIL_ONLY: ReadonlySet<WorkloadId> = new Set(['W6', 'W7', 'W8', 'W9']);
/** The writes whose event (SPEC §14) the reference measures with and without: a create and a status change. */
export const OUTBOX_WORKLOADS: readonly WorkloadId[] = ['W1', 'W3'];
/** Issue 21's second goal: Node's CPU per create, status change and get by id, also at one offered rate. */
export const PACED_WORKLOADS: readonly WorkloadId[] = ['W1', 'W3', 'W4'];
/** SPEC §19's: the requests of W2 and W1, through the MCP endpoint. */
export const MCP_WORKLOADS: ReadonlySet<WorkloadId> = new Set(['W8', 'W9']);
/** The leads in one W6 request. */
export const BATCH_SIZE = 100;
/**
 * W6's connections, at most: SPEC §10 promises only 2xx to 32 concurrent requests of ordinary cost
 * and to "batches of 100 at lower concurrency". 32 batches at once are 3,200 leads in the tenant's
 * line, which the embedded database's one connection takes about a second to write: the last
 * waits past the 1 s bound (a 503) or is refused because it would (a 429). A batch's throughput
 * is the database's either way; 8 connections reach the same leads per second.
 */
export const BATCH_CONNECTIONS = 8;
/**
 * The order they run in on each target: reads first, then writes, so that the leads W1 adds (more
 * on a faster target) do not change what the reads before it see.
 */
export const RUN_ORDER: readonly WorkloadId[] = ['W2', 'W8', 'W4', 'W3', 'W1', 'W9', 'W5', 'W6', 'W7'];

export type RequestKind = 'listLeads' | 'getLead' | 'getCustomer' | 'createLead' | 'updateLeadStatus';
/** The request kinds of workloads the reference and the ceilings also serve. */
export type SharedWorkloadId = Exclude<WorkloadId, 'W5' | 'W6' | 'W7' | 'W8' | 'W9'>;

/** W5: what a CRM integration does most (look records up, list), with one write in five. */
export const MIX: readonly { kind: RequestKind; percent: number }[] = [
  { kind: 'listLeads', percent: 20 },
  { kind: 'getLead', percent: 30 },
  { kind: 'getCustomer', percent: 30 },
  { kind: 'createLead', percent: 10 },
  { kind: 'updateLeadStatus', percent: 10 },
];

export const SINGLE: Record<SharedWorkloadId, RequestKind> = {
  W1: 'createLead',
  W2: 'listLeads',
  W3: 'updateLeadStatus',
  W4: 'getCustomer',
};

export interface WorkloadData {
  leadIds: readonly string[];
  customerIds: readonly string[];
  statuses: readonly string[];
}

export interface BenchRequest {
  method: 'GET' | 'POST' | 'PUT';
  path: string;
  body?: string;
  /** Beside the token and, with a body, its content type. */
  headers?: Record<string, string>;
}

/** What an MCP client sends with every request after it initialised (Streamable HTTP). */
export const MCP_HEADERS = { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };

/** A `tools/call` as an MCP client posts it. */
export function mcpToolCall(id: number, name: string, args: Record<string, unknown>): BenchRequest {
  const message = { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } };
  return { method: 'POST', path: `${API}/mcp`, body: JSON.stringify(message), headers: MCP_HEADERS };
}

export const API = '/api/external/v1';

const FIRST = ['Maria', 'João', 'Ana', 'Pedro', 'Juliana', 'Lucas', 'Fernanda', 'Rafael', 'Camila', 'Bruno'];
const LAST = ['Silva', 'Santos', 'Oliveira', 'Souza', 'Pereira', 'Costa', 'Rodrigues', 'Almeida', 'Nascimento'];
const ASCII: Record<string, string> = { ã: 'a', á: 'a', é: 'e', í: 'i', ó: 'o', ú: 'u', ç: 'c' };
const SOURCES = ['website', 'landing-page', 'google-ads', 'facebook', 'indicacao', 'evento'];
const NOTES = [
  'Pediu uma demonstração pelo formulário do site; prefere contato à tarde.',
  'Veio da campanha de outubro. Interessado no plano anual para 15 usuários.',
  'Ligou pedindo orçamento; já usa um concorrente e quer migrar até o fim do trimestre.',
];

function pick<T>(items: readonly T[], random: () => number): T {
  return items[Math.floor(random() * items.length)] as T;
}

/** A lead as a website form posts it. */
export function leadFormBody(serial: number, random: () => number = Math.random): Record<string, unknown> {
  const first = pick(FIRST, random);
  const last = pick(LAST, random);
  const local = `${first}.${last}`.toLowerCase().replace(/[^a-z.]/g, (c) => ASCII[c] ?? '');
  return {
    name: `${first} ${last}`,
    email: `${local}.${serial}@example.com`,
    phone: `+55 11 9${String(serial % 10_000).padStart(4, '0')}-${String((serial * 7919) % 10_000).padStart(4, '0')}`,
    source: pick(SOURCES, random),
    score: Math.floor(random() * 101),
    notes: pick(NOTES, random),
  };
}

/** Makes the next request of a workload; random ids are drawn from the seeded rows. */
export function requestMaker(
  workload: WorkloadId,
  data: WorkloadData,
  random: () => number = Math.random,
): () => BenchRequest {
  let serial = Math.floor(random() * 1e9);
  const make: Record<RequestKind, () => BenchRequest> = {
    listLeads: () => ({ method: 'GET', path: `${API}/leads` }),
    getLead: () => ({ method: 'GET', path: `${API}/leads/${pick(data.leadIds, random)}` }),
    getCustomer: () => ({ method: 'GET', path: `${API}/customers/${pick(data.customerIds, random)}` }),
    createLead: () => ({ method: 'POST', path: `${API}/leads`, body: JSON.stringify(leadFormBody(serial++, random)) }),
    updateLeadStatus: () => ({
      method: 'PUT',
      path: `${API}/leads/${pick(data.leadIds, random)}/status`,
      body: JSON.stringify({ status: pick(data.statuses, random) }),
    }),
  };
  if (workload === 'W6') {
    return () => {
      const items = Array.from({ length: BATCH_SIZE }, () => leadFormBody(serial++, random));
      return { method: 'POST', path: `${API}/leads/batch`, body: JSON.stringify({ items }) };
    };
  }
  if (workload === 'W8') return () => mcpToolCall(serial++, 'search_leads', { limit: 100 });
  if (workload === 'W9') return () => mcpToolCall(serial++, 'create_lead', leadFormBody(serial++, random));
  if (workload === 'W7') {
    // Each new lead is posted again by the next request, as a form submitted twice: created, then updated.
    let again: Record<string, unknown> | undefined;
    return () => {
      const body = again ? { ...again, score: Math.floor(random() * 101) } : leadFormBody(serial++, random);
      again = again ? undefined : body;
      return { method: 'POST', path: `${API}/leads?upsert=email`, body: JSON.stringify(body) };
    };
  }
  if (workload !== 'W5') return make[SINGLE[workload]];
  return () => {
    let roll = random() * 100;
    for (const { kind, percent } of MIX) {
      roll -= percent;
      if (roll < 0) return make[kind]();
    }
    return make.listLeads();
  };
}
