/** What Linux tells about a process, read from /proc: CPU time and resident memory. */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';

let ticksPerSecond: number | undefined;

function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** User plus system CPU time of a process so far, in ms (resolution: one clock tick, usually 10 ms); undefined once it is gone. */
export function cpuMs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name, in parentheses, may hold spaces: count fields after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]); // utime and stime: fields 14 and 15 of stat(5)
    return (ticks * 1000) / clockTicks();
  } catch {
    return undefined;
  }
}

export function statusKb(pid: number, field: 'VmRSS' | 'VmHWM'): number | undefined {
  try {
    const match = readFileSync(`/proc/${pid}/status`, 'utf8').match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Tracks a process's peak resident set size over a span: the kernel's high-water mark (VmHWM)
 * is reset at the start when the kernel allows it (clear_refs 5), and VmRSS is polled as well.
 */
export class PeakRss {
  #maxKb = 0;
  #timer: NodeJS.Timeout;
  readonly #pid: number;

  constructor(pid: number, intervalMs = 100) {
    this.#pid = pid;
    try {
      writeFileSync(`/proc/${pid}/clear_refs`, '5');
    } catch {
      // Not allowed here: the polled VmRSS alone then gives the peak.
    }
    this.#sample();
    this.#timer = setInterval(() => this.#sample(), intervalMs);
  }

  #sample(): void {
    this.#maxKb = Math.max(this.#maxKb, statusKb(this.#pid, 'VmRSS') ?? 0, statusKb(this.#pid, 'VmHWM') ?? 0);
  }

  /** Stops polling; the peak in MB. */
  stop(): number {
    clearInterval(this.#timer);
    this.#sample();
    return this.#maxKb / 1024;
  }
}

/** CPU time of a set of processes over a span (PostgreSQL backends come and go: new ones count from zero). */
export class CpuSpan {
  readonly #start = new Map<number, number>();

  constructor(pids: readonly number[]) {
    for (const pid of pids) {
      const ms = cpuMs(pid);
      if (ms !== undefined) this.#start.set(pid, ms);
    }
  }

  /** CPU ms used since the start by the given processes (those gone before the end are lost: say so). */
  end(pids: readonly number[]): number {
    let total = 0;
    for (const pid of new Set([...pids, ...this.#start.keys()])) {
      const now = cpuMs(pid);
      if (now !== undefined) total += now - (this.#start.get(pid) ?? 0);
    }
    return total;
  }
}

export interface Machine {
  cores: number;
  cpuModel: string;
  memoryGb: number;
  loadAverage: [number, number, number];
  node: string;
  platform: string;
}

/** The machine, and the version of `node`: the Node.js binary the servers run on (this process's unless `--node`). */
export function machine(node = process.execPath): Machine {
  const [one = 0, five = 0, fifteen = 0] = os.loadavg();
  return {
    cores: os.availableParallelism(),
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    memoryGb: Math.round(os.totalmem() / 2 ** 30),
    loadAverage: [one, five, fifteen],
    node: node === process.execPath ? process.version : execFileSync(node, ['--version'], { encoding: 'utf8' }).trim(),
    platform: `${os.type()} ${os.release()} ${os.arch()}`,
  };
}
