import createClient, { type Client } from 'openapi-fetch';
import type { components, operations, paths } from './schema.js';

export type { components, operations, paths };
export type FunilClient = Client<paths>;

export interface FunilClientOptions {
  /** The server, e.g. `http://127.0.0.1:3000`; the API's own path is added here. */
  url: string;
  /** A tenant token (`fnl_…`) with the scopes the calls need. */
  token: string;
  /** `en` for English error messages; Portuguese otherwise. */
  language?: 'en' | 'pt-BR';
}

/**
 * A typed client of the external API: paths, parameters, bodies and answers are checked by
 * TypeScript against the OpenAPI document the server publishes.
 */
export function createFunilClient(options: FunilClientOptions): FunilClient {
  return createClient<paths>({
    baseUrl: `${options.url.replace(/\/$/, '')}/api/external/v1`,
    headers: {
      authorization: `Bearer ${options.token}`,
      ...(options.language ? { 'accept-language': options.language } : {}),
    },
  });
}
