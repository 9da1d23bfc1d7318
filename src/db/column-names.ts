import { CamelCasePlugin } from 'kysely';

/**
 * Kysely's camel-case plugin as every database handle has it: SQL names are snake_case
 * (`tenant_id`), the code's camelCase (`tenantId`). Column names only: a jsonb value keeps its keys
 * as stored (a tenant's custom field `f_text` stays `f_text`; events' rows are renamed where they
 * are read, EventRepository).
 */
export class ColumnNames extends CamelCasePlugin {
  constructor() {
    super({ maintainNestedObjectKeys: true });
  }

  /** The name a result column has in a row the plugin maps: `tenant_id` → `tenantId`. */
  fieldOf(column: string): string {
    return this.camelCase(column);
  }
}
