/** How long a query may wait for a connection (FUNIL_DB_CONNECT_TIMEOUT_MS). */
export const DEFAULT_DB_CONNECT_TIMEOUT_MS = 2_000;
/** PostgreSQL's statement_timeout (FUNIL_DB_STATEMENT_TIMEOUT_MS). */
export const DEFAULT_DB_STATEMENT_TIMEOUT_MS = 3_000;
