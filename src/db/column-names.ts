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
  codeNameOf(sqlName: string): string {
    return this.camelCase(sqlName);
  }

  /** The name the plugin writes in SQL for a name of the code: `lastContactText` → `last_contact_text`. */
  sqlNameOf(codeName: string): string {
    return this.snakeCase(codeName);
  }
}

const names = new ColumnNames();

/** `tenant_id` → `tenantId`, as the plugin renames a result's columns. */
export const codeNameOf = (sqlName: string): string => names.codeNameOf(sqlName);

/** `lastContactText` → `last_contact_text`, as the plugin writes a name in SQL. */
export const sqlNameOf = (codeName: string): string => names.sqlNameOf(codeName);
