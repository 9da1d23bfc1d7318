/**
 * Calls made in one turn of the event loop, answered together by one call of `run` (one statement
 * for many: the jobs fetched together claim together). `run` answers one output per input, in
 * order; when it fails, every call of its batch fails.
 */
export class TickBatch<I, O> {
  #waiting: { input: I; resolve(output: O): void; reject(error: unknown): void }[] = [];

  constructor(private readonly run: (inputs: readonly I[]) => Promise<readonly O[]>) {}

  call(input: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.#waiting.push({ input, resolve, reject });
      if (this.#waiting.length === 1) setImmediate(() => this.#flush());
    });
  }

  #flush(): void {
    const batch = this.#waiting;
    this.#waiting = [];
    this.run(batch.map((call) => call.input)).then(
      (outputs) => {
        for (const [index, call] of batch.entries()) call.resolve(outputs[index] as O);
      },
      (error: unknown) => {
        for (const call of batch) call.reject(error);
      },
    );
  }
}
