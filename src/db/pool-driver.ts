import {
  CompiledQuery,
  type ConnectionProvider,
  type DatabaseConnection,
  type Driver,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';
import type pg from 'pg';
import { WaitBudget } from './connection-wait.js';

/** Takes a pool's connection within what a budget has left to wait (connection-wait.ts). */
export type Checkout = (budget: WaitBudget) => Promise<pg.PoolClient>;

/** Statements whose row count Kysely reports as the rows they changed. */
const CHANGING = new Set(['INSERT', 'UPDATE', 'DELETE', 'MERGE']);

/** A checked-out pg client as Kysely runs queries on it; what Kysely's PostgresConnection does, less streaming (unused). */
class ClientConnection implements DatabaseConnection {
  constructor(readonly client: pg.PoolClient) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const { command, rowCount, rows } = await this.client.query(query.sql, query.parameters as unknown[]);
    return {
      rows: (rows ?? []) as R[],
      numAffectedRows: CHANGING.has(command) ? BigInt(rowCount ?? 0) : undefined,
    };
  }

  // biome-ignore lint/correctness/useYield: refuses before yielding anything
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming queries are not supported');
  }
}

/**
 * Kysely's driver over Funil's connection checkout (connection-wait.ts) instead of pg-pool's own
 * `connect`. The database's own handle takes its connections through Kysely's default provider
 * (`acquireConnection`: a budget for each connection, in the line of no tenant); a request's handle
 * through BudgetedConnections (`acquireWithin` its budget). Transactions are begun and ended with
 * the SQL Kysely's PostgresDriver sends.
 */
export class PoolDriver implements Driver {
  constructor(
    private readonly checkout: Checkout,
    private readonly end: () => Promise<void>,
    /** The wait of a connection taken outside any request, as pg-pool's own timeout would bound it. */
    private readonly unbudgetedWaitMs: number,
  ) {}

  async init(): Promise<void> {}

  /** A connection for work of no request: a budget of its own, in the line of no tenant. */
  acquireConnection(): Promise<DatabaseConnection> {
    return this.acquireWithin(new WaitBudget(this.unbudgetedWaitMs));
  }

  async acquireWithin(budget: WaitBudget): Promise<ClientConnection> {
    return new ClientConnection(await this.checkout(budget));
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const modes = [settings.isolationLevel && `isolation level ${settings.isolationLevel}`, settings.accessMode];
    const chosen = modes.filter(Boolean);
    await connection.executeQuery(CompiledQuery.raw(chosen.length ? `start transaction ${chosen.join(' ')}` : 'begin'));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    (connection as ClientConnection).client.release();
  }

  destroy(): Promise<void> {
    return this.end();
  }
}

/** A request's connections: each taken within what the request has left to wait, in its tenant's line. */
export class BudgetedConnections implements ConnectionProvider {
  constructor(
    private readonly driver: PoolDriver,
    private readonly budget: WaitBudget,
  ) {}

  async provideConnection<T>(consumer: (connection: DatabaseConnection) => Promise<T>): Promise<T> {
    const connection = await this.driver.acquireWithin(this.budget);
    try {
      return await consumer(connection);
    } finally {
      connection.client.release();
    }
  }
}
