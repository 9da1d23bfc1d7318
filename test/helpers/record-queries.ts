import {
  type CompiledQuery,
  type KyselyPlugin,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  PostgresQueryCompiler,
  type QueryResult,
  type RootOperationNode,
  type UnknownRow,
} from 'kysely';
import type { Db } from '../../src/db/database.js';

/**
 * Records the last statement run through a handle, as PostgreSQL receives it (snake_case): those
 * compiled at the call, which it sees as a plugin, and those compiled once (PreparedQuery), which
 * no plugin sees again: it sees them run.
 */
export class RecordQueries implements KyselyPlugin {
  readonly #compiler = new PostgresQueryCompiler();
  last: CompiledQuery | undefined;
  /** Every statement recorded, in order. */
  readonly all: CompiledQuery[] = [];

  /**
   * `db`, recording what runs through it and through the handles and executors it gives
   * (withoutPlugins, getExecutor().withoutPlugins()).
   */
  on(db: Db): Db {
    return this.#watch(db.withPlugin(this));
  }

  /** `target` (a handle or an executor), recording what it runs, and watching the handles and executors it gives. */
  #watch<T extends object>(target: T): T {
    return new Proxy(target, {
      get: (target, property) => {
        if (property === 'executeQuery') {
          return (query: CompiledQuery) => {
            this.#record(query);
            return (target as unknown as Db).executeQuery(query);
          };
        }
        if (property === 'withoutPlugins') return () => this.#watch((target as unknown as Db).withoutPlugins());
        if (property === 'getExecutor') return () => this.#watch((target as unknown as Db).getExecutor());
        const value = Reflect.get(target, property, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  }

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    this.#record(this.#compiler.compileQuery(args.node, args.queryId));
    return args.node;
  }

  #record(query: CompiledQuery): void {
    this.last = query;
    this.all.push(query);
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}
