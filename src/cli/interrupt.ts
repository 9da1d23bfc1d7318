/** The exit code after Ctrl-C, as shells report a command stopped by SIGINT (128 + 2). */
export const INTERRUPTED = 130;

/**
 * Ctrl-C while a long command is under way (an import, an export): the first aborts what it is
 * doing, so that it can tidy up and say so; a second quits at once.
 */
export class Interrupt {
  readonly #controller = new AbortController();
  readonly #onSignal = () => {
    if (this.#controller.signal.aborted) process.exit(INTERRUPTED);
    this.#controller.abort();
  };

  constructor() {
    process.on('SIGINT', this.#onSignal);
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  stop(): void {
    process.off('SIGINT', this.#onSignal);
  }
}
