import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { LoadGenerator, LoadJob, LoadResult } from './load-job.js';
import type { WorkerMessage } from './load-worker.js';

const WORKER = fileURLToPath(new URL('./load-worker.ts', import.meta.url));

/** autocannon in a process of its own (load-worker.ts), kept for every workload of one target run. */
export class AutocannonLoad implements LoadGenerator {
  readonly #child: ChildProcess;

  constructor(cwd: string) {
    this.#child = fork(WORKER, [], {
      cwd,
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
  }

  run(job: LoadJob, onMeasuring: () => void): Promise<LoadResult> {
    return new Promise((resolve, reject) => {
      const onMessage = (message: WorkerMessage) => {
        if (message.type === 'measuring') return onMeasuring();
        this.#child.off('message', onMessage);
        this.#child.off('exit', onExit);
        if (message.type === 'result') resolve(message.result);
        else reject(new Error(`load generator: ${message.message}`));
      };
      const onExit = (code: number | null) => reject(new Error(`load generator exited (${code})`));
      this.#child.on('message', onMessage);
      this.#child.once('exit', onExit);
      this.#child.send(job);
    });
  }

  async stop(): Promise<void> {
    if (this.#child.exitCode !== null || this.#child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.#child.once('exit', resolve));
    this.#child.send('exit');
    const timer = setTimeout(() => this.#child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  }
}
