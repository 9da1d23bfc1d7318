import type { ErrorObject } from 'ajv';
import type { Db } from '../db/database.js';
import type { CustomFieldCatalog } from '../fields/custom-field-catalog.js';
import { ApiError, validationFailed } from '../shared/errors.js';
import { fieldMessage, fieldMessages } from '../shared/messages.js';
import { buildValidatorCompiler, toFieldIssues } from '../shared/validation.js';
import type { CreateExport } from './export.schemas.js';
import type { ExportResourceSpec, ExportResources } from './export-resources.js';

/** What a list takes that an export does not: it holds every matching row. */
const PAGING = ['limit', 'cursor'];

type Validate = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };

/** A checked export request: the list's query as its route would have it, and the fields. */
export interface CheckedExport {
  readonly query: Record<string, unknown>;
  readonly fields: string[] | null;
}

/**
 * Checks an export's query and fields up front (SPEC §23), with the list route's own rules: its
 * query-string schema compiled as the route's is (text coerced to numbers), its request rules, and
 * a first page of one row, which checks what only the tenant's data can (its stages, its fields).
 * Every fault is a 400 naming `query.<parameter>` or `fields.<index>`.
 */
export class ExportRequests {
  readonly #validators: ReadonlyMap<string, Validate>;

  constructor(
    private readonly resources: ExportResources,
    private readonly catalog: CustomFieldCatalog,
  ) {
    const compile = buildValidatorCompiler();
    this.#validators = new Map(
      Object.values(resources).map((spec) => [
        spec.resource,
        compile({ schema: spec.listQuery, method: 'GET', url: '/', httpPart: 'querystring' }) as Validate,
      ]),
    );
  }

  async check(handle: Db, tenantId: string, body: CreateExport): Promise<CheckedExport> {
    const spec = this.resources[body.resource];
    const query = this.#query(spec, body.query ?? {});
    const { sort, filters } = underQuery(() => spec.listRequest(query));
    const key = spec.sortKeys[sort.field] as ExportResourceSpec['sortKeys'][string];
    await underQuery(() => spec.source.list(handle, tenantId, filters, { key, descending: sort.descending, limit: 1 }));
    return { query, fields: body.fields ? await this.#fields(handle, tenantId, spec, body.fields) : null };
  }

  #query(spec: ExportResourceSpec, given: Readonly<Record<string, unknown>>): Record<string, unknown> {
    const paging = Object.keys(given).find((name) => PAGING.includes(name));
    if (paging !== undefined) throw unknownField(`query.${paging}`);
    // A copy without a prototype: the validator coerces it in place, and a key is only ever data.
    const query: Record<string, unknown> = Object.assign(Object.create(null), given);
    const validate = this.#validators.get(spec.resource) as Validate;
    if (!validate(query)) {
      const errors = (validate.errors ?? []).map((error) => ({
        ...error,
        instancePath: `/query${error.instancePath}`,
      }));
      throw validationFailed(toFieldIssues(errors, 'body'));
    }
    return { ...query };
  }

  async #fields(handle: Db, tenantId: string, spec: ExportResourceSpec, fields: readonly string[]): Promise<string[]> {
    const custom = new Set((await this.catalog.of(handle, tenantId, spec.resource)).definitions.map((d) => d.key));
    fields.forEach((field, index) => {
      const known = field.startsWith('custom.')
        ? custom.has(field.slice('custom.'.length))
        : spec.objectFields.includes(field);
      if (!known) throw unknownField(`fields.${index}`);
    });
    return [...fields];
  }
}

function unknownField(field: string): ApiError {
  return validationFailed([{ field, message: fieldMessage(field, fieldMessages.unknown()) }]);
}

/** Runs a check of the list's query; its 400s name the parameters under `query.`. */
function underQuery<T>(check: () => T): T {
  try {
    const result = check();
    if (result instanceof Promise) return result.catch((error: unknown) => Promise.reject(prefixed(error))) as T;
    return result;
  } catch (error) {
    throw prefixed(error);
  }
}

function prefixed(error: unknown): unknown {
  if (!(error instanceof ApiError) || error.code !== 'validation_failed' || !error.details) return error;
  return validationFailed(
    error.details.map((issue) => ({ field: `query.${issue.field}`, message: issue.message })),
    error.details[0]?.message,
  );
}
