/** How an instance delivers webhooks (FUNIL_WEBHOOKS_*, read by config.ts). */
export interface WebhookSettings {
  /** Whether this instance delivers (dispatches events and makes attempts); every instance serves the API. */
  readonly deliver: boolean;
  /** Targets may be plain `http://` (development and tests only). */
  readonly allowHttp: boolean;
  /** Targets may resolve to private, loopback and link-local addresses (development and tests only). */
  readonly allowPrivate: boolean;
  /** The pause before each retry, in seconds (SPEC §15: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h). */
  readonly retryDelaysSec: readonly number[];
  /** The key that encrypts subscription secrets at rest (32 bytes, base64); unset: one kept in the database. */
  readonly secretKey: Buffer | undefined;
}
