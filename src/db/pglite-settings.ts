/**
 * The embedded database's buffer cache, in MB (FUNIL_EMBEDDED_SHARED_BUFFERS_MB). PGlite starts
 * with PostgreSQL's 128 MB, and the process holds all of it from the start: PostgreSQL zeroes its
 * shared memory, which in WebAssembly is the process's own. Each MB less is a MB less of RSS. Pages
 * past the cache are read again, mostly from the operating system's file cache.
 */
export const DEFAULT_EMBEDDED_SHARED_BUFFERS_MB = 32;
/** PGlite is 32-bit WebAssembly: at 2,048 MB it fails to start ("PGlite failed to initialize properly"). */
export const MAX_EMBEDDED_SHARED_BUFFERS_MB = 1_024;

/** PGlite's start parameters for these settings, after its own defaults. */
export function pgliteStartParams(defaults: readonly string[], sharedBuffersMb: number): string[] {
  return [...defaults, '-c', `shared_buffers=${sharedBuffersMb}MB`];
}
