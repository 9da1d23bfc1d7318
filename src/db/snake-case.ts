/** What Kysely's camel-case plugin makes of a name: `lastContactText` → `last_contact_text`. */
export function snakeCase(name: string): string {
  return name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}
