/**
 * Far deeper than any body the API takes (an MCP tool call's: six levels), and far below what overflows the stack
 * of the JSON.stringify that hashes a body for its Idempotency-Key, or stores an import's rows: JSON.parse takes
 * 500,000 levels, JSON.stringify does not.
 */
export const MAX_JSON_DEPTH = 64;

/** `"`, `\\`, `[`, `]`, `{`, `}` */
const [QUOTE, BACKSLASH, OPEN_BRACKET, CLOSE_BRACKET, OPEN_BRACE, CLOSE_BRACE] = [0x22, 0x5c, 0x5b, 0x5d, 0x7b, 0x7d];

/** Whether valid JSON text nests arrays and objects deeper than MAX_JSON_DEPTH. */
export function nestedTooDeep(text: string): boolean {
  if (text.length <= 2 * MAX_JSON_DEPTH) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (inString) {
      if (code === BACKSLASH) i++;
      else if (code === QUOTE) inString = false;
    } else if (code === QUOTE) inString = true;
    else if (code === OPEN_BRACKET || code === OPEN_BRACE) {
      if (++depth > MAX_JSON_DEPTH) return true;
    } else if (code === CLOSE_BRACKET || code === CLOSE_BRACE) depth--;
  }
  return false;
}

/** Only a `\uD800`–`\uDFFF` escape can put a lone surrogate in parsed JSON; raw bytes decode to U+FFFD. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;
const LONE_SURROGATE = /\p{Surrogate}/u;

/**
 * Whether `value`, parsed from `text`, holds half a character in a key or a string: PostgreSQL
 * cannot store one, and would silently store U+FFFD instead.
 */
export function hasLoneSurrogate(text: string, value: unknown): boolean {
  if (!SURROGATE_ESCAPE.test(text)) return false;
  const stack = [value];
  while (stack.length) {
    const item = stack.pop();
    if (typeof item === 'string') {
      if (LONE_SURROGATE.test(item)) return true;
    } else if (item !== null && typeof item === 'object') {
      for (const [key, child] of Object.entries(item)) {
        if (LONE_SURROGATE.test(key)) return true;
        stack.push(child);
      }
    }
  }
  return false;
}
