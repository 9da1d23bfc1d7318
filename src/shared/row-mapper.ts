/** One property of the objects a row mapper builds: its key, the row's key it is read from, and how it is converted. */
export interface MappedProperty {
  readonly key: string;
  readonly rowKey: string;
  /** Read when the row's value at `rowKey` is null or absent. */
  readonly orRowKey?: string | undefined;
  readonly convert?: ((value: unknown) => unknown) | undefined;
}

/**
 * A function that builds an object of fixed keys from a row, `row => ({ _id: row.id, name: row.name, … })`,
 * compiled once per field table (as Fastify compiles its serializers and validators). An object
 * literal of known keys is made in one allocation with its properties inside it; the same object
 * built key by key in a loop took 20 times as long on Node 20, with more garbage, and a list page
 * builds a hundred of them (bench/results/profile-notes.md, issue 21's sixth pass).
 *
 * The keys come from the field tables in the code, never from a request; each is written as a JSON
 * string, and `__proto__`, which an object literal would take as the prototype, is refused.
 */
export function compileRowMapper<T>(
  properties: readonly MappedProperty[],
): (row: Readonly<Record<string, unknown>>) => T {
  const converters = properties.map((property) => property.convert);
  const entries = properties.map(({ key, rowKey, orRowKey, convert }, index) => {
    if (key === '__proto__') throw new Error('a mapped object cannot have a __proto__ key');
    const read = (name: string) => `row[${JSON.stringify(name)}]`;
    const value = orRowKey === undefined ? read(rowKey) : `(${read(rowKey)} ?? ${read(orRowKey)})`;
    return `${JSON.stringify(key)}: ${convert ? `converters[${index}](${value})` : value}`;
  });
  const compile = new Function('converters', `return (row) => ({ ${entries.join(', ')} });`) as (
    converters: readonly (((value: unknown) => unknown) | undefined)[],
  ) => (row: Readonly<Record<string, unknown>>) => T;
  return compile(converters);
}
