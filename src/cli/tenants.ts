import type { Command } from 'commander';
import { type CliContext, contextOf } from './context.js';
import { fields, printJson, printLines, table, when } from './output.js';

/** A tenant as the admin API returns it (SPEC §9). */
export interface Tenant {
  id: string;
  name: string;
  active: boolean;
  phoneCountry: string;
  createdAt: string;
  updatedAt: string;
}

export function registerTenantCommands(tenants: Command): void {
  tenants
    .command('create')
    .description('create a tenant')
    .argument('<name>', 'name of the tenant')
    .option('--phone-country <code>', 'ISO country its phones without a +code are read in (default BR)')
    .action(async (name: string, options: { phoneCountry?: string }, command: Command) => {
      const ctx = contextOf(command);
      const phoneCountry = options.phoneCountry?.toUpperCase();
      const tenant = await ctx.client.post<Tenant>('/tenants', { name, ...(phoneCountry && { phoneCountry }) });
      if (ctx.json) return printJson(tenant);
      printLines(`Created tenant "${tenant.name}".`, describeTenant(tenant));
    });

  tenants
    .command('list')
    .description('list every tenant')
    .action(async (_options: unknown, command: Command) => {
      const ctx = contextOf(command);
      const list = await ctx.client.get<Tenant[]>('/tenants');
      if (ctx.json) return printJson(list);
      if (list.length === 0) return printLines('No tenants yet. Create one with: funil tenants create <name>');
      printLines(
        table(
          ['id', 'name', 'status', 'created'],
          list.map((t) => [t.id, t.name, statusOf(t), when(t.createdAt)]),
        ),
      );
    });

  tenants
    .command('rename')
    .description('rename a tenant')
    .argument('<id>', 'id of the tenant')
    .argument('<name>', 'new name')
    .action(async (id: string, name: string, _options: unknown, command: Command) => {
      const ctx = contextOf(command);
      const tenant = await update(ctx, id, { name });
      if (tenant) printLines(`Renamed tenant ${tenant.id} to "${tenant.name}".`);
    });

  tenants
    .command('phone-country')
    .description("set the country a tenant's phones without a +code are read in, to match duplicates")
    .argument('<id>', 'id of the tenant')
    .argument('<code>', 'ISO 3166-1 alpha-2 code, e.g. BR, PT, US')
    .action(async (id: string, code: string, _options: unknown, command: Command) => {
      const tenant = await update(contextOf(command), id, { phoneCountry: code.toUpperCase() });
      if (tenant)
        printLines(`Tenant "${tenant.name}" (${tenant.id}) reads phones without a +code as ${tenant.phoneCountry}.`);
    });

  tenants
    .command('disable')
    .description('disable a tenant: its tokens get 403 until it is enabled again')
    .argument('<id>', 'id of the tenant')
    .action(async (id: string, _options: unknown, command: Command) => {
      const tenant = await update(contextOf(command), id, { active: false });
      if (tenant) printLines(`Disabled tenant "${tenant.name}" (${tenant.id}): its tokens are refused until enabled.`);
    });

  tenants
    .command('enable')
    .description('enable a disabled tenant')
    .argument('<id>', 'id of the tenant')
    .action(async (id: string, _options: unknown, command: Command) => {
      const tenant = await update(contextOf(command), id, { active: true });
      if (tenant) printLines(`Enabled tenant "${tenant.name}" (${tenant.id}).`);
    });
}

/** PUT /tenants/:id; prints the JSON itself in --json mode and then returns nothing. */
async function update(ctx: CliContext, id: string, body: Partial<Pick<Tenant, 'name' | 'active' | 'phoneCountry'>>) {
  const tenant = await ctx.client.put<Tenant>(`/tenants/${encodeURIComponent(id)}`, body);
  if (ctx.json) {
    printJson(tenant);
    return undefined;
  }
  return tenant;
}

function statusOf(tenant: Tenant): string {
  return tenant.active ? 'active' : 'disabled';
}

function describeTenant(tenant: Tenant): string {
  return fields([
    ['id', tenant.id],
    ['name', tenant.name],
    ['status', statusOf(tenant)],
    ['phone country', tenant.phoneCountry],
    ['created', when(tenant.createdAt)],
  ]);
}
