/** How often plain lines (not a terminal) report a step that is still under way. */
const LINE_EVERY_MS = 5_000;

/** One step's state as the progress shows it: `done` of `total` units, at some rate. */
export interface Step {
  /** `uploading`, `queued`, `running`, `reverting`, ... */
  label: string;
  done: number;
  total: number | undefined;
  /** `rows`, `records`, `bytes`. */
  unit: string;
  /** Units per second, when known. */
  rate: number | undefined;
}

/** Where the progress of an import goes: drawn on a terminal, plain lines in a log, or nowhere. */
export interface Progress {
  show(step: Step): void;
  /** Ends the progress: the line under way is finished, so what follows starts on a new one. */
  end(): void;
}

/**
 * A bar redrawn in place with `\r` on a terminal; plain lines when the output is a file or a pipe
 * (a line when the step changes, then one every few seconds); nothing when `quiet` and not a
 * terminal. Written by hand: a bar is ~30 lines, and the line mode a library would not give.
 */
export function progressOn(stream: NodeJS.WriteStream, quiet = false): Progress {
  if (stream.isTTY) return new TerminalBar(stream);
  if (quiet) return { show: () => {}, end: () => {} };
  return new PlainLines(stream);
}

/** A terminal is redrawn at most this often (an upload reports every 64 kB it reads). */
const REDRAW_MS = 100;

class TerminalBar implements Progress {
  #drawn = false;
  #label = '';
  #drawnAt = 0;

  constructor(private readonly stream: NodeJS.WriteStream) {}

  show(step: Step): void {
    const now = performance.now();
    const finished = step.total !== undefined && step.done >= step.total;
    if (step.label === this.#label && !finished && now - this.#drawnAt < REDRAW_MS) return;
    this.#label = step.label;
    this.#drawnAt = now;
    const tail = [amount(step), percent(step), rateOf(step)].filter(Boolean).join('  ');
    // The bar keeps one width while the text beside it grows (a rate appears): room for 60 characters of text.
    const width = Math.max(10, Math.min(30, (this.stream.columns || 80) - 70));
    const bar = step.total === undefined ? '' : `[${fill(step.done / Math.max(step.total, 1), width)}]  `;
    // \x1b[K clears what a longer line before left on the right.
    this.stream.write(`\r${step.label.padEnd(9)} ${bar}${tail}\x1b[K`);
    this.#drawn = true;
  }

  end(): void {
    if (this.#drawn) this.stream.write('\n');
    this.#drawn = false;
  }
}

function fill(fraction: number, width: number): string {
  const filled = Math.round(Math.min(1, Math.max(0, fraction)) * width);
  return '#'.repeat(filled) + '-'.repeat(width - filled);
}

class PlainLines implements Progress {
  #label = '';
  #lastAt = 0;

  constructor(private readonly stream: NodeJS.WriteStream) {}

  show(step: Step): void {
    const now = Date.now();
    if (step.label === this.#label && now - this.#lastAt < LINE_EVERY_MS) return;
    this.#label = step.label;
    this.#lastAt = now;
    const about = [percent(step), rateOf(step)].filter(Boolean).join(', ');
    this.stream.write(`${step.label}: ${amount(step)}${about ? ` (${about})` : ''}\n`);
  }

  end(): void {}
}

/** `12.3 kB of 1.7 MB`, `4,000 of 12,000 rows`, `12 records`. */
function amount({ done, total, unit }: Step): string {
  if (unit === 'bytes') return `${bytes(done)}${total === undefined ? '' : ` of ${bytes(total)}`}`;
  const of = total === undefined ? '' : ` of ${total.toLocaleString('en-US')}`;
  return `${done.toLocaleString('en-US')}${of} ${unit}`;
}

/** 950 B, 12.3 kB, 45.6 MB. */
function bytes(value: number): string {
  if (value < 1e3) return `${value} B`;
  return value < 1e6 ? `${(value / 1e3).toFixed(1)} kB` : `${(value / 1e6).toFixed(1)} MB`;
}

function percent(step: Step): string {
  if (step.total === undefined) return '';
  return `${step.total === 0 ? 100 : Math.floor((100 * step.done) / step.total)}%`;
}

function rateOf(step: Step): string {
  if (step.rate === undefined || !Number.isFinite(step.rate)) return '';
  return step.unit === 'bytes'
    ? `${bytes(step.rate)}/s`
    : `${Math.round(step.rate).toLocaleString('en-US')} ${step.unit}/s`;
}

/** A rate measured from the first time it is asked: units per second since then. */
export class Rate {
  #since: { at: number; done: number } | undefined;

  of(done: number): number | undefined {
    const now = performance.now();
    if (!this.#since) {
      this.#since = { at: now, done };
      return undefined;
    }
    const seconds = (now - this.#since.at) / 1000;
    return seconds < 1 ? undefined : (done - this.#since.done) / seconds;
  }
}
