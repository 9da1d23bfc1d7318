import { createHmac, randomBytes } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';

/** A new signing secret in the Standard Webhooks form: `whsec_` + base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

/** The `webhook-signature` header: one `v1,<base64 HMAC-SHA256>` per secret, space-separated (rotation). */
export function signatureHeader(
  secrets: readonly string[],
  id: string,
  timestampSeconds: number,
  body: string,
): string {
  const signedContent = `${id}.${timestampSeconds}.${body}`;
  return secrets
    .map((secret) => `v1,${createHmac('sha256', secretKey(secret)).update(signedContent).digest('base64')}`)
    .join(' ');
}

function secretKey(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  return Buffer.from(encoded, 'base64');
}
