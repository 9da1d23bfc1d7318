/**
 * How long a query may wait for a connection (FUNIL_DB_CONNECT_TIMEOUT_MS). SPEC §10: past a
 * second, a fast 503 serves the client better than an answer that queued for seconds.
 */
export const DEFAULT_DB_CONNECT_TIMEOUT_MS = 1_000;
/** PostgreSQL's statement_timeout (FUNIL_DB_STATEMENT_TIMEOUT_MS). */
export const DEFAULT_DB_STATEMENT_TIMEOUT_MS = 3_000;
