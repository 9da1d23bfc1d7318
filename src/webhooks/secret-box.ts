import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { appSecret } from '../db/app-secrets.js';
import type { Db } from '../db/database.js';

/**
 * Webhook secrets at rest (SPEC §15): Funil must sign with them, so they cannot be hashed like
 * tokens; they are encrypted with AES-256-GCM instead. The key is FUNIL_WEBHOOKS_SECRET_KEY when the
 * operator sets one (then a copy of the database alone does not reveal the secrets), else a key
 * kept in the database itself (which protects only against reading the one column). A sealed
 * value names its key by a fingerprint, so secrets sealed before an operator set a key still open.
 *
 * Format: `v1.<key fingerprint>.<iv>.<tag>.<ciphertext>`, base64url parts.
 */
export class SecretBox {
  #keys: Promise<Keys> | undefined;

  /** The keys are read on first use (the database may be away when the server starts). */
  constructor(
    private readonly db: Db,
    private readonly configured: Buffer | undefined,
  ) {}

  async seal(plain: string): Promise<string> {
    const { sealing } = await this.#open();
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', sealing.bytes, iv);
    const sealed = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return ['v1', sealing.id, iv, cipher.getAuthTag(), sealed]
      .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
      .join('.');
  }

  async unseal(value: string): Promise<string> {
    const { all } = await this.#open();
    const [version, id, iv, tag, sealed] = value.split('.');
    const key = id === undefined ? undefined : all.get(id);
    if (version !== 'v1' || !key || iv === undefined || tag === undefined || sealed === undefined) {
      throw new Error('a webhook secret is sealed with a key this server does not have (FUNIL_WEBHOOKS_SECRET_KEY)');
    }
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(sealed, 'base64url')), decipher.final()]).toString('utf8');
  }

  #open(): Promise<Keys> {
    this.#keys ??= appSecret(this.db, 'webhook-secret-key').then(
      (bytes) => {
        const stored = keyOf(bytes);
        const sealing = this.configured ? keyOf(this.configured) : stored;
        return { sealing, all: new Map([sealing, stored].map((key) => [key.id, key.bytes])) };
      },
      (error: unknown) => {
        this.#keys = undefined;
        throw error;
      },
    );
    return this.#keys;
  }
}

interface Keys {
  sealing: Key;
  all: ReadonlyMap<string, Buffer>;
}

interface Key {
  id: string;
  bytes: Buffer;
}

function keyOf(bytes: Buffer): Key {
  return { id: createHash('sha256').update(bytes).digest('base64url').slice(0, 8), bytes };
}
