import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { McpTestClient, mcpUrl } from '../helpers/mcp-client.js';
import { describeEachBackend, type TestTenant } from '../helpers/test-app.js';
import { CLINIC, SEVEN } from '../pipelines/pipeline-fixtures.js';

/** The other tenant's only pipeline, its default, changed to stages no one else has. */
const SCHOOL = [
  { key: 'enquiry', label: 'Interessado', kind: 'open' },
  { key: 'enrolled_student', label: 'Matriculado', kind: 'won' },
  { key: 'declined', label: 'Desistente', kind: 'lost' },
];
const keysOf = (stages: readonly { key: string }[]) => stages.map((stage) => stage.key);

type Schema = { enum?: string[]; anyOf?: Schema[]; items?: Schema; properties?: Record<string, Schema> };

/** The stage keys a lead tool's listing offers as `status`: the enum (search_leads': of its one-key branch and its list's items). */
function statusEnums(tools: readonly Tool[]): Map<string, string[][]> {
  const found = new Map<string, string[][]>();
  for (const tool of tools.filter(({ name }) => name.includes('lead'))) {
    const properties = tool.inputSchema.properties as Record<string, Schema> | undefined;
    const status = properties?.status ?? properties?.fields?.properties?.status;
    if (!status) continue;
    const branches = status.anyOf ?? [status];
    found.set(
      tool.name,
      branches.map((branch) => branch.enum ?? branch.items?.enum ?? []),
    );
  }
  return found;
}

describeEachBackend('MCP tools name each tenant its own pipelines (SPEC §19, §20)', (ctx) => {
  let clinicTenant: TestTenant;
  let schoolTenant: TestTenant;
  let url: URL;
  let clinic: { id: string };

  const clients: McpTestClient[] = [];
  const connect = async (token: string) => {
    const client = await McpTestClient.connect(url, token, { 'accept-language': 'en' });
    clients.push(client);
    return client;
  };
  before(async () => {
    url = await mcpUrl(ctx.app);
    clinicTenant = await ctx.tenant('Clinic tenant');
    schoolTenant = await ctx.tenant('School tenant');
    const created = await ctx.api(clinicTenant, 'POST', '/pipelines', { body: { name: 'Clinic', stages: CLINIC } });
    assert.equal(created.status, 201, created.text);
    clinic = created.body;
    // The default pipeline's id is the tenant's.
    const changed = await ctx.api(schoolTenant, 'PUT', `/pipelines/${schoolTenant.id}`, {
      body: { name: 'School', stages: SCHOOL },
    });
    assert.equal(changed.status, 200, changed.text);
  });
  after(async () => {
    await Promise.all(clients.map((client) => client.close()));
  });

  test("tools/list and the instructions name the caller's tenant's stages, and never another tenant's", async () => {
    // One instance, the two tenants in turn, within the catalog's 2 s: nothing of one reaches the other.
    const first = await connect(clinicTenant.token);
    const school = await connect(schoolTenant.token);
    const again = await connect(clinicTenant.token);
    const clinicKeys = [...SEVEN, ...keysOf(CLINIC)];
    const schoolKeys = keysOf(SCHOOL);
    const statusTools = ['create_lead', 'search_leads', 'set_lead_status', 'update_lead'];

    for (const [client, own, foreign] of [
      [first, clinicKeys, schoolKeys],
      [again, clinicKeys, schoolKeys],
      [school, schoolKeys, clinicKeys],
    ] as const) {
      const enums = statusEnums(client.tools);
      assert.deepEqual([...enums.keys()].sort(), statusTools);
      for (const [name, branches] of enums) {
        for (const keys of branches) assert.deepEqual(keys, own, name);
      }
      // (Output schemas name the kinds, "won" and "lost" among them: not stages.)
      const words = [
        client.client.getInstructions() ?? '',
        ...client.tools.map((tool) => JSON.stringify([tool.description, tool.inputSchema])),
      ];
      for (const key of foreign) {
        assert.ok(!words.some((text) => text.includes(`"${key}"`) || text.includes(`\\"${key}\\"`)), key);
      }
    }

    // Only the listing changes: what was optional stays so.
    const create = first.tools.find((tool) => tool.name === 'create_lead');
    assert.deepEqual(create?.inputSchema.required, ['name']);

    // Each pipeline in words: its name, its id, its stages in order with their kinds.
    for (const name of [...statusTools, 'pipeline_summary']) {
      const description = first.tools.find((tool) => tool.name === name)?.description ?? '';
      assert.match(description, new RegExp(`"Clinic" \\(id ${clinic.id}\\)`), name);
      assert.match(description, new RegExp(`"Pipeline" \\(id ${clinicTenant.id}, the default\\)`), name);
      assert.match(
        description,
        /"scheduled" \("Agendado", open\) → "attended" \("Compareceu", open\) → "enrolled" \("Matrícula", won\) → "gave_up" \("Desistiu", lost\)/,
        name,
      );
    }
    assert.match(first.client.getInstructions() ?? '', /"new" \(open\) → "contacted" \(open\)/);
    assert.match(school.client.getInstructions() ?? '', /"enquiry" \("Interessado", open\) → "enrolled_student"/);
    const summary = school.tools.find((tool) => tool.name === 'pipeline_summary');
    const properties = (summary?.inputSchema.properties ?? {}) as Record<string, { description: string }>;
    assert.match(
      properties.pipeline?.description ?? '',
      new RegExp(`"School" \\(id ${schoolTenant.id}, the default\\)`),
    );
  });

  test('a change of the pipelines is listed at once on the instance that made it', async () => {
    const stages = [...CLINIC, { key: 'follow_up', label: 'Retorno', kind: 'open' }];
    const changed = await ctx.api(clinicTenant, 'PUT', `/pipelines/${clinic.id}`, { body: { stages } });
    assert.equal(changed.status, 200, changed.text);
    try {
      const client = await connect(clinicTenant.token);
      const [keys] = statusEnums(client.tools).get('set_lead_status') ?? [];
      assert.deepEqual(keys, [...SEVEN, ...keysOf(stages)]);
    } finally {
      const back = await ctx.api(clinicTenant, 'PUT', `/pipelines/${clinic.id}`, { body: { stages: CLINIC } });
      assert.equal(back.status, 200, back.text);
    }
  });

  test('stages too many to describe in full: the descriptions name the pipelines, the enums every key', async () => {
    const tenant = await ctx.tenant('Many stages');
    const stages = Array.from({ length: 50 }, (_, i) => ({
      key: `stage_${String(i).padStart(2, '0')}`,
      label: `A long label for a stage, the ${i}th of fifty, as some people name their stages`,
      kind: i === 49 ? 'won' : 'open',
    }));
    const changed = await ctx.api(tenant, 'PUT', `/pipelines/${tenant.id}`, { body: { name: 'Long', stages } });
    assert.equal(changed.status, 200, changed.text);
    const client = await connect(tenant.token);
    const setStatus = client.tools.find((tool) => tool.name === 'set_lead_status');
    assert.match(
      setStatus?.description ?? '',
      new RegExp(`one pipeline, "Long" \\(id ${tenant.id}, the default\\); list_pipelines`),
    );
    assert.doesNotMatch(setStatus?.description ?? '', /A long label/);
    assert.deepEqual(statusEnums(client.tools).get('set_lead_status'), [keysOf(stages)]);
    const listed = await client.succeeds('list_pipelines', {});
    assert.deepEqual(listed.items[0].stages, stages);
  });

  test('list_pipelines: the pipelines GET /pipelines shows, to a token with leads:read only', async () => {
    const client = await connect(clinicTenant.token);
    const listed = await client.succeeds('list_pipelines', {});
    assert.deepEqual(listed, { items: (await ctx.api(clinicTenant, 'GET', '/pipelines')).body });
    assert.deepEqual(
      listed.items.map((pipeline: { name: string; default: boolean }) => [pipeline.name, pipeline.default]),
      [
        ['Pipeline', true],
        ['Clinic', false],
      ],
    );
    const theirs = await (await connect(schoolTenant.token)).succeeds('list_pipelines', {});
    assert.deepEqual(
      theirs.items.map((pipeline: { id: string; stages: unknown }) => [pipeline.id, pipeline.stages]),
      [[schoolTenant.id, SCHOOL]],
    );
    await client.fails('validation_failed', 'list_pipelines', { pipeline: clinic.id });

    const tool = client.tools.find((listedTool) => listedTool.name === 'list_pipelines');
    assert.equal(tool?.annotations?.readOnlyHint, true);
    assert.deepEqual(tool?.inputSchema, { type: 'object', properties: {}, additionalProperties: false });

    const reader = await connect((await ctx.token(clinicTenant.id, ['leads:read'])).token);
    assert.ok(reader.toolNames().includes('list_pipelines'));
    const writer = await connect((await ctx.token(clinicTenant.id, ['leads:write', 'customers:read'])).token);
    assert.ok(!writer.toolNames().includes('list_pipelines'));
    const refused = await writer.fails('forbidden', 'list_pipelines', {});
    assert.match(refused.error, /leads:read/);
  });

  test("create_lead with `pipeline` starts the lead at that pipeline's first stage; a status is of the lead's own pipeline", async () => {
    const client = await connect(clinicTenant.token);
    const created = await client.succeeds('create_lead', {
      name: 'Ana',
      phone: '+55 11 5555-0101',
      pipeline: clinic.id,
    });
    assert.equal(created.lead.pipeline, clinic.id);
    assert.equal(created.lead.status, 'scheduled');
    assert.deepEqual(created.lead, (await ctx.api(clinicTenant, 'GET', `/leads/${created.lead._id}`)).body);
    const plain = await client.succeeds('create_lead', { name: 'Bia', phone: '+55 11 5555-0102' });
    assert.deepEqual([plain.lead.pipeline, plain.lead.status], [clinicTenant.id, 'new']);

    // A stage of the tenant's other pipeline: the service's 400, naming `status` and the lead's own stages.
    const id = created.lead._id;
    const refused = await client.fails('validation_failed', 'set_lead_status', { id, status: 'contacted' });
    assert.equal(refused.details[0].field, 'status');
    assert.match(refused.details[0].message, /scheduled.*attended.*enrolled.*gave_up/);
    assert.doesNotMatch(refused.details[0].message, /contacted/);
    const unchanged = (await ctx.api(clinicTenant, 'GET', `/leads/${id}`)).body;
    assert.deepEqual([unchanged.pipeline, unchanged.status], [clinic.id, 'scheduled']);
    const mixed = await client.fails('validation_failed', 'create_lead', {
      name: 'Caio',
      phone: '+55 11 5555-0103',
      pipeline: clinic.id,
      status: 'qualified',
    });
    assert.equal(mixed.details[0].field, 'status');

    const moved = await client.succeeds('set_lead_status', { id, status: 'attended' });
    assert.equal(moved.lead.status, 'attended');
    // update_lead moves a lead to another pipeline, at its first stage unless `status` says otherwise.
    const back = await client.succeeds('update_lead', { id, fields: { pipeline: clinicTenant.id } });
    assert.deepEqual([back.lead.pipeline, back.lead.status], [clinicTenant.id, 'new']);
    const there = await client.succeeds('update_lead', { id, fields: { pipeline: clinic.id, status: 'enrolled' } });
    assert.deepEqual([there.lead.pipeline, there.lead.status], [clinic.id, 'enrolled']);

    // Another tenant's stages and pipelines are none of this one's.
    const school = await connect(schoolTenant.token);
    const foreign = await school.fails('validation_failed', 'create_lead', {
      name: 'Duda',
      phone: '+55 11 5555-0104',
      status: 'scheduled',
    });
    assert.equal(foreign.details[0].field, 'status');
    const elsewhere = await school.fails('validation_failed', 'create_lead', {
      name: 'Duda',
      phone: '+55 11 5555-0104',
      pipeline: clinic.id,
    });
    assert.equal(elsewhere.details[0].field, 'pipeline');
  });

  test('search_leads by pipeline, and by several stages as a list or comma-separated', async () => {
    const client = await connect(clinicTenant.token);
    for (const [name, status] of [
      ['Eva', 'scheduled'],
      ['Fabi', 'attended'],
      ['Gil', 'gave_up'],
    ] as const) {
      await client.succeeds('create_lead', {
        name,
        phone: '+55 11 5555-0200',
        source: 'search',
        pipeline: clinic.id,
        status,
      });
    }
    await client.succeeds('create_lead', { name: 'Hugo', phone: '+55 11 5555-0201', source: 'search' });

    const names = (items: { name: string }[]) => items.map((item) => item.name).sort();
    const inClinic = await client.succeeds('search_leads', { source: 'search', pipeline: clinic.id });
    assert.deepEqual(names(inClinic.items), ['Eva', 'Fabi', 'Gil']);
    const listed = await client.succeeds('search_leads', { source: 'search', status: ['scheduled', 'attended'] });
    const rested = await ctx.api(clinicTenant, 'GET', '/leads', {
      query: { source: 'search', status: 'scheduled,attended', limit: '20' },
    });
    assert.deepEqual(listed.items, rested.body);
    assert.deepEqual(names(listed.items), ['Eva', 'Fabi']);
    assert.deepEqual(
      (await client.succeeds('search_leads', { source: 'search', status: 'scheduled,attended' })).items,
      listed.items,
    );
    assert.deepEqual(names((await client.succeeds('search_leads', { source: 'search', status: 'new' })).items), [
      'Hugo',
    ]);

    const outside = await client.fails('validation_failed', 'search_leads', { pipeline: clinic.id, status: ['new'] });
    assert.equal(outside.details[0].field, 'status');
    const empty = await client.fails('validation_failed', 'search_leads', { status: [] });
    assert.equal(empty.details[0].field, 'status');
  });

  test('pipeline_summary counts the pipeline named, each stage with its kind: GET /leads/summary?pipeline=', async () => {
    const client = await connect(clinicTenant.token);
    const query = { createdUntil: new Date(Date.now() + 60_000).toISOString() };
    const counted = await client.succeeds('pipeline_summary', { ...query, pipeline: clinic.id });
    const summary = await ctx.api(clinicTenant, 'GET', '/leads/summary', { query: { ...query, pipeline: clinic.id } });
    assert.deepEqual(counted, summary.body);
    assert.equal(counted.pipeline, clinic.id);
    assert.deepEqual(
      counted.byStatus.map((row: { status: string; kind: string }) => [row.status, row.kind]),
      CLINIC.map((stage) => [stage.key, stage.kind]),
    );
    assert.ok(counted.total > 0);
    const byDefault = await client.succeeds('pipeline_summary', query);
    assert.equal(byDefault.pipeline, clinicTenant.id);
    assert.deepEqual(
      byDefault.byStatus.map((row: { status: string }) => row.status),
      SEVEN,
    );
    const unknown = await client.fails('validation_failed', 'pipeline_summary', { pipeline: schoolTenant.id });
    assert.equal(unknown.details[0].field, 'pipeline');
  });
});
