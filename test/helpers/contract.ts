import { AssertionError } from 'node:assert';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { FastifyInstance } from 'fastify';

interface OpenApiDocument {
  servers: { url: string }[];
  components?: { schemas?: Record<string, object>; headers?: Record<string, { required?: boolean }> };
  paths: Record<
    string,
    Record<
      string,
      {
        responses: Record<
          string,
          {
            content?: Record<string, { schema: object }>;
            headers?: Record<string, { required?: boolean; $ref?: string }>;
          }
        >;
      }
    >
  >;
}

interface Route {
  prefix: string;
  template: string;
  pattern: RegExp;
  operations: OpenApiDocument['paths'][string];
  /** The document's components, which schemas refer to as `#/components/schemas/…`. */
  components: OpenApiDocument['components'];
}

const shared = new Map<string, Promise<ContractChecker>>();

/**
 * Checks answers against the OpenAPI documents the app serves: a route's status must be
 * documented, every header documented as required must be there, and its JSON body must match
 * the documented schema. Every route test that goes through TestContext.request is thereby a
 * contract test.
 */
export class ContractChecker {
  readonly #ajv = new Ajv2020({ strict: false, allErrors: true });
  readonly #validators = new Map<string, ValidateFunction>();

  private constructor(private readonly routes: Route[]) {
    addFormats.default(this.#ajv);
  }

  /**
   * The checker of `app`'s documents, shared by every app of this process built from the same
   * settings (`key`): the 400 KB document and its validators cost a suite ~0.2 s of CPU to make,
   * and are the same for each.
   */
  static forApp(app: FastifyInstance, key: string): Promise<ContractChecker> {
    let checker = shared.get(key);
    if (!checker) {
      checker = ContractChecker.load(app);
      shared.set(key, checker);
      // A failed load is not kept: the next suite tries again.
      checker.catch(() => shared.delete(key));
    }
    return checker;
  }

  static async load(app: FastifyInstance): Promise<ContractChecker> {
    const routes: Route[] = [];
    for (const url of ['/api/external/v1/openapi.json', '/api/admin/v1/openapi.json']) {
      const document = (await app.inject({ method: 'GET', url })).json() as OpenApiDocument;
      const prefix = document.servers[0]?.url ?? '';
      for (const [template, operations] of Object.entries(document.paths)) {
        const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`);
        routes.push({ prefix, template, pattern, operations, components: document.components });
      }
    }
    // As the router does: a path that names no parameter (`/leads/summary`) before one that does (`/leads/{id}`).
    routes.sort((a, b) => Number(a.template.includes('{')) - Number(b.template.includes('{')));
    return new ContractChecker(routes);
  }

  /** Throws when the answer breaks the document; answers of undocumented routes are not judged. */
  check(method: string, url: string, status: number, headers: Readonly<Record<string, unknown>>, body: unknown): void {
    const contentType = String(headers['content-type'] ?? '');
    const path = url.split('?')[0] ?? '';
    const route = this.routes.find((r) => path.startsWith(r.prefix) && r.pattern.test(path.slice(r.prefix.length)));
    const operation = route?.operations[method.toLowerCase()];
    if (!route || !operation) return;
    const where = `${method} ${route.prefix}${route.template} → ${status}`;
    const response = operation.responses[String(status)];
    if (!response) throw new AssertionError({ message: `undocumented status: ${where}` });
    const missing = Object.entries(response.headers ?? {})
      .map(([name, header]) => [name, resolved(header, route.components)] as const)
      .filter(([name, header]) => header?.required && headers[name.toLowerCase()] === undefined)
      .map(([name]) => name);
    if (missing.length)
      throw new AssertionError({ message: `${where}: required headers missing: ${missing.join(', ')}` });
    const schema = response.content?.['application/json']?.schema;
    if (!schema) return;
    if (!contentType.startsWith('application/json')) {
      throw new AssertionError({ message: `${where} answered ${contentType}, documented as JSON` });
    }
    const key = `${where}`;
    let validate = this.#validators.get(key);
    if (!validate) {
      // With the components beside it, its `$ref`s resolve as in the document.
      validate = this.#ajv.compile({ ...schema, components: route.components });
      this.#validators.set(key, validate);
    }
    if (!validate(body)) {
      throw new AssertionError({
        message: `${where}: body does not match the documented schema: ${this.#ajv.errorsText(validate.errors)}`,
      });
    }
  }
}

/** A header as the document defines it: itself, or the shared one its `$ref` names. */
function resolved(
  header: { required?: boolean; $ref?: string },
  components: OpenApiDocument['components'],
): { required?: boolean } | undefined {
  if (header.$ref === undefined) return header;
  const name = header.$ref.replace('#/components/headers/', '');
  const shared = components?.headers?.[name];
  if (!shared) throw new AssertionError({ message: `unresolved header reference ${header.$ref}` });
  return shared;
}
