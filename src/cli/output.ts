/** An error the CLI reports as one line on stderr, with exit code 1 (or the one given). */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/** Collapses a message to one line, so every failure is exactly one line on stderr. */
export function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}

export function reportFailure(error: unknown): void {
  const message = error instanceof CliError ? error.message : `unexpected error: ${describe(error)}`;
  process.stderr.write(`funil: ${oneLine(message)}\n`);
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export function printJson(value: unknown): void {
  console.log(JSON.stringify(value, null, 2));
}

export function printLines(...lines: string[]): void {
  console.log(lines.join('\n'));
}

/** Left-aligned columns under upper-case headers, separated by two spaces. */
export function table(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(headers.map((header) => header.toUpperCase())), ...rows.map(line)].join('\n');
}

/** Indented `key  value` lines, keys padded to one width. */
export function fields(pairs: readonly (readonly [string, string])[]): string {
  const width = Math.max(...pairs.map(([key]) => key.length));
  return pairs.map(([key, value]) => `  ${key.padEnd(width)}  ${value}`).join('\n');
}

/** An API timestamp, to the second, for people: `2026-11-21 14:12:57Z`; `-` when absent. */
export function when(timestamp: string | null | undefined): string {
  if (!timestamp) return '-';
  return timestamp.replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}
