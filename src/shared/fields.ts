/**
 * Keeps the writable fields present in a validated body, turning "" into null:
 * web forms send empty fields for "no value" (SPEC §3). Read-only fields are dropped.
 */
export function pickWritable<K extends string>(
  body: Readonly<Record<string, unknown>>,
  writable: readonly K[],
): Partial<Record<K, unknown>> {
  const picked: Partial<Record<K, unknown>> = {};
  for (const key of writable) {
    if (!Object.hasOwn(body, key)) continue;
    const value = body[key];
    picked[key] = value === '' ? null : value;
  }
  return picked;
}

/** Cuts a string to `max` characters, counted as PostgreSQL counts them (code points). */
export function truncate(value: string, max: number): string {
  const chars = Array.from(value);
  return chars.length <= max ? value : chars.slice(0, max).join('');
}
