import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../db/database.js';
import {
  type IdempotencyRepository,
  type KeyOwner,
  requestFingerprint,
} from '../idempotency/idempotency.repository.js';
import { spendsKey, verdictOf } from '../idempotency/idempotency-rules.js';
import type { ApiError } from '../shared/errors.js';
import type { Text } from '../shared/messages.js';

/** A tool call's outcome as the REST route would have answered it: its status, and its JSON. */
export interface ToolOutcome {
  readonly status: number;
  readonly body: object;
  /** The answer of an earlier call with the same key, repeated. */
  readonly replayed?: boolean;
  /** A failure of the server (5xx), which the route answers as REST would. */
  readonly failed?: ApiError;
}

const messages = {
  keyReused: {
    pt: 'Este idempotencyKey já foi usado com outra ferramenta ou outros argumentos.',
    en: 'This idempotencyKey was already used with another tool or other arguments.',
  },
  inProgress: {
    pt: 'A primeira chamada com este idempotencyKey ainda está em andamento. Tente de novo em instantes.',
    en: 'The first call with this idempotencyKey is still in progress. Retry shortly.',
  },
} as const satisfies Record<string, Text>;

/**
 * SPEC §7 for MCP writes: the same token, `idempotencyKey`, tool and arguments within 24 hours
 * answer the first outcome again and change nothing; another tool or other arguments are a 422, a
 * first call still running a 409. The keys are the REST API's (one table, one owner per key), so a
 * key is spent once whichever way it came.
 */
export class ToolIdempotency {
  constructor(private readonly records: IdempotencyRepository) {}

  /**
   * `call.args`: the validated arguments, the key aside; `fail` turns an error into its outcome (its
   * §2 body). The claim runs on the request's `handle`.
   */
  async run(
    handle: Db,
    owner: KeyOwner,
    call: { tool: string; args: unknown },
    attempt: () => Promise<ToolOutcome>,
    { fail, log }: { fail: (error: ApiError) => ToolOutcome; log: FastifyBaseLogger },
  ): Promise<ToolOutcome> {
    const claim = await this.records.claim(handle, owner, requestFingerprint(`MCP ${call.tool}`, call.args));
    const verdict = verdictOf(claim, { reused: messages.keyReused, inProgress: messages.inProgress });
    if (verdict.kind === 'refuse') return fail(verdict.error);
    if (verdict.kind === 'replay') {
      return { status: verdict.response.status, body: JSON.parse(verdict.response.body), replayed: true };
    }
    let outcome: ToolOutcome | undefined;
    try {
      outcome = await attempt();
      return outcome;
    } finally {
      // As on REST: a refused call (400) or a failure (5xx, or a throw) did nothing, so its key stays free for a retry.
      // Bookkeeping, outside the request's budget for waiting on connections; its failure leaves the outcome
      // right (a retry waits the claim out, then runs again), so it is logged, not answered.
      await (outcome !== undefined && spendsKey(outcome.status)
        ? this.records.complete(owner, { status: outcome.status, headers: {}, body: JSON.stringify(outcome.body) })
        : this.records.release(owner)
      ).catch((error) => log.error({ err: error }, 'could not record the outcome of an idempotent tool call'));
    }
  }
}
