/** The keywords that apply to one JSON type only: a `type` union's branch of that type takes them. */
const KEYWORDS_OF_TYPE: Record<string, readonly string[]> = {
  string: ['minLength', 'maxLength', 'pattern', 'format'],
  number: ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'],
  integer: ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'],
  array: ['items', 'prefixItems', 'minItems', 'maxItems', 'uniqueItems', 'contains'],
  object: [
    'properties',
    'required',
    'additionalProperties',
    'patternProperties',
    'minProperties',
    'maxProperties',
    'propertyNames',
  ],
};
const TYPED_KEYWORDS = new Set(Object.values(KEYWORDS_OF_TYPE).flat());

/**
 * A tool's schema as every MCP client can read it, the same values admitted. Clients that map tool
 * schemas onto a single-`type` dialect (Gemini's function declarations, an OpenAPI 3.0 subset) cannot
 * read a `type` array, so `{type: ["string", "null"], maxLength: 9}` becomes
 * `{anyOf: [{type: "string", maxLength: 9}, {type: "null"}]}`; a record's `^.*$` entry that allows
 * anything becomes `additionalProperties: true`. The Ajv keyword that trims strings server-side goes.
 *
 * An `input` also drops the schema of a map's values (custom fields by key, a merge's chosen ids by
 * field): such a dialect has no `additionalProperties` map nor `patternProperties`, and the server
 * still checks each value, answering `custom.<key>` (or `fields.<field>`).
 */
export function portableSchema(schema: unknown, { input }: { input: boolean }): Record<string, unknown> {
  return portable(JSON.parse(JSON.stringify(schema)), input) as Record<string, unknown>;
}

const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs']);
const SCHEMA_LISTS = new Set(['anyOf', 'allOf', 'oneOf', 'prefixItems']);
const SCHEMAS = new Set(['items', 'additionalProperties', 'not', 'contains', 'propertyNames']);

function portable(node: unknown, input: boolean): unknown {
  if (typeof node !== 'object' || node === null || Array.isArray(node)) return node;
  const schema: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'transform' && Array.isArray(value)) continue;
    if (SCHEMA_MAPS.has(key)) {
      const entries = Object.entries(value as object).map(([name, sub]) => [name, portable(sub, input)]);
      schema[key] = Object.fromEntries(entries);
    } else if (SCHEMA_LISTS.has(key)) schema[key] = (value as unknown[]).map((sub) => portable(sub, input));
    else schema[key] = SCHEMAS.has(key) ? portable(value, input) : value;
  }
  openRecords(schema, input);
  return Array.isArray(schema.type) ? typeBranches(schema, schema.type as string[]) : schema;
}

function openRecords(schema: Record<string, unknown>, input: boolean): void {
  const patterns = schema.patternProperties as Record<string, object> | undefined;
  const anyKey = patterns && Object.keys(patterns).length === 1 ? patterns['^.*$'] : undefined;
  if (anyKey && (input || Object.keys(anyKey).length === 0)) {
    delete schema.patternProperties;
    schema.additionalProperties = true;
  }
  if (input && typeof schema.additionalProperties === 'object') delete schema.additionalProperties;
}

function typeBranches(schema: Record<string, unknown>, types: readonly string[]): Record<string, unknown> {
  const shared = Object.fromEntries(
    Object.entries(schema).filter(([key]) => key !== 'type' && !TYPED_KEYWORDS.has(key)),
  );
  const anyOf = types.map((type) => {
    const branch: Record<string, unknown> = { type };
    for (const key of KEYWORDS_OF_TYPE[type] ?? []) if (key in schema) branch[key] = schema[key];
    return branch;
  });
  return { ...shared, anyOf };
}
