import { Duplex } from 'node:stream';
import type { PGlite } from '@electric-sql/pglite';
import type pg from 'pg';

/**
 * A pool's settings for `pglite`, over a PgliteSocket: PGlite's own user and database, and ssl and
 * options set, so that node-postgres does not take them from PGSSLMODE and PGOPTIONS, which are
 * for a server.
 */
export function pgliteConnection(pglite: PGlite): pg.PoolConfig {
  return {
    stream: () => new PgliteSocket(pglite),
    user: 'postgres',
    database: 'postgres',
    ssl: false,
    options: '',
  };
}

/**
 * A socket to the embedded database, for node-postgres: what the client writes (whole protocol
 * messages, startup included) is run by PGlite, and what PGlite answers is read back as raw bytes,
 * which node-postgres parses as it parses a server's. PGlite's own node-postgres adapter parses
 * every answer into message objects first (copying each field of each row into a buffer of its
 * own): on a feed page of 1,000 events that was a fifth of the process's CPU.
 *
 * Writes are run one after another (a stream never runs two at once), and those made while one
 * runs are run together, as a server reads what a socket holds.
 */
export class PgliteSocket extends Duplex {
  readonly #pglite: PGlite;

  constructor(pglite: PGlite) {
    super();
    this.#pglite = pglite;
  }

  /** node-postgres "connects" first, and waits for this. */
  connect(): this {
    process.nextTick(() => this.emit('connect'));
    return this;
  }

  setNoDelay(): this {
    return this;
  }

  setKeepAlive(): this {
    return this;
  }

  ref(): this {
    return this;
  }

  unref(): this {
    return this;
  }

  override _read(): void {
    // Answers are pushed as PGlite makes them.
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.#run(chunk).then(() => done(), done);
  }

  override _writev(chunks: { chunk: Buffer }[], done: (error?: Error | null) => void): void {
    this.#run(Buffer.concat(chunks.map(({ chunk }) => chunk))).then(() => done(), done);
  }

  override _final(done: (error?: Error | null) => void): void {
    this.push(null);
    done();
  }

  async #run(message: Buffer): Promise<void> {
    await this.#pglite.execProtocolRawStream(message, {
      // A view of PGlite's memory, valid only during the call: copied.
      onRawData: (data) => this.push(Buffer.from(data)),
    });
  }
}
