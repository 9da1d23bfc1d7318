import { type ApiError, conflict, idempotencyKeyReused } from '../shared/errors.js';
import type { Text } from '../shared/messages.js';
import type { ClaimResult, StoredResponse } from './idempotency.repository.js';

/** What a claim of a key means for the request that made it (SPEC §7), for REST and MCP alike. */
export type ClaimVerdict =
  | { readonly kind: 'run' }
  | { readonly kind: 'replay'; readonly response: StoredResponse }
  | { readonly kind: 'refuse'; readonly error: ApiError };

/**
 * The claim's verdict: run (the key is this request's now), replay the first answer, or refuse —
 * a 422 for a key used with another request, a 409 with `Retry-After: 1` while its first request
 * still runs. `texts` say it in the words of the way in (a header, a tool argument).
 */
export function verdictOf(claim: ClaimResult, texts: { reused: Text; inProgress: Text }): ClaimVerdict {
  switch (claim.kind) {
    case 'claimed':
      return { kind: 'run' };
    case 'replay':
      return { kind: 'replay', response: claim.response };
    case 'mismatch':
      return { kind: 'refuse', error: idempotencyKeyReused(texts.reused) };
    case 'in-progress':
      return { kind: 'refuse', error: conflict(texts.inProgress, { retryAfterSeconds: 1 }) };
  }
}

/**
 * Whether an outcome spends the key (its answer is kept for replays): a refused request (400) or a
 * failure of the server (5xx) did nothing, so its key stays free for a corrected retry.
 */
export function spendsKey(status: number): boolean {
  return status !== 400 && status < 500;
}
