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

/** Records every query as PostgreSQL will receive it (added after the CamelCasePlugin: snake_case). */
export class RecordQueries implements KyselyPlugin {
  readonly #compiler = new PostgresQueryCompiler();
  last: CompiledQuery | undefined;

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    this.last = this.#compiler.compileQuery(args.node, args.queryId);
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}
