import type { ServerResponse } from 'node:http';

/**
 * Runs `then` once `response` has closed (its answer out, or its client gone), or at once if it
 * already has. Node emits 'close' once: a listener added later never runs, and a request whose
 * client hung up while a hook awaited I/O (its token looked up, its count in Redis) is past it.
 */
export function whenClosed(response: ServerResponse, then: () => void): void {
  if (response.closed) then();
  else response.once('close', then);
}
