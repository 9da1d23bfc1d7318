import { setTimeout as sleep } from 'node:timers/promises';

/** How often the CLI reads a background job (an import, an export) while it waits for it. */
const POLL_MS = 500;

/**
 * Reads a job until `done` says it is over, showing each state read; stops early, with the last
 * state read, when `signal` aborts (Ctrl-C).
 */
export async function pollUntil<T>(
  read: () => Promise<T>,
  show: (state: T) => void,
  done: (state: T) => boolean,
  signal: AbortSignal,
): Promise<T> {
  for (;;) {
    const state = await read();
    show(state);
    if (done(state) || signal.aborted) return state;
    await sleep(POLL_MS, undefined, { signal }).catch(() => {});
  }
}
