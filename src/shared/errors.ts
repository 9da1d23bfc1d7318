import { fieldMessage, fieldMessages, messages, type Text } from './messages.js';

export type ErrorCode =
  | 'validation_failed'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'precondition_failed'
  | 'cursor_expired'
  | 'merge_expired'
  | 'export_expired'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'idempotency_key_reused'
  | 'rate_limited'
  | 'internal_error'
  | 'service_unavailable';

export interface FieldIssue {
  readonly field: string;
  readonly message: Text;
}

export interface ApiErrorOptions {
  readonly statusCode: number;
  readonly code: ErrorCode;
  readonly text: Text;
  readonly details?: readonly FieldIssue[] | undefined;
  /** Fields the body carries besides the usual ones (`existingId`). */
  readonly extra?: Readonly<Record<string, unknown>> | undefined;
  readonly headers?: Readonly<Record<string, string>> | undefined;
  /** When set, `extra` goes only to callers whose token has this scope (SPEC §2: `existingId`). */
  readonly extraScope?: string | undefined;
}

/**
 * An error that the error handler renders in the SPEC §2 shape. Handlers throw these, never send;
 * they are made by the factories below, one per status.
 */
export class ApiError extends Error {
  readonly statusCode: number;
  readonly code: ErrorCode;
  readonly text: Text;
  readonly details: readonly FieldIssue[] | undefined;
  readonly extra: Readonly<Record<string, unknown>> | undefined;
  readonly headers: Readonly<Record<string, string>> | undefined;
  readonly extraScope: string | undefined;

  constructor(options: ApiErrorOptions) {
    super(options.text.en);
    this.name = 'ApiError';
    this.statusCode = options.statusCode;
    this.code = options.code;
    this.text = options.text;
    this.details = options.details;
    this.extra = options.extra;
    this.headers = options.headers;
    this.extraScope = options.extraScope;
  }
}

const retryAfter = (seconds: number) => ({ 'retry-after': String(seconds) });

export const validationFailed = (details: readonly FieldIssue[], text?: Text) =>
  new ApiError({
    statusCode: 400,
    code: 'validation_failed',
    text: text ?? details[0]?.message ?? messages.invalidRequest,
    details,
  });

/** A 401: a token is needed; `challenge` is the `WWW-Authenticate` header that says how. */
export const unauthorized = (text: Text, challenge: string) =>
  new ApiError({ statusCode: 401, code: 'unauthorized', text, headers: { 'www-authenticate': challenge } });

/** Text the database cannot store (the NUL character): a 400 on the body. */
export const unstorableText = () =>
  validationFailed([{ field: 'body', message: fieldMessage('body', fieldMessages.noNul()) }]);

export const forbidden = (text: Text) => new ApiError({ statusCode: 403, code: 'forbidden', text });

export const notFound = (text: Text) => new ApiError({ statusCode: 404, code: 'not_found', text });

/**
 * A 409; `extra` (the holder's id) reaches only a caller whose token has `readScope`;
 * `retryAfterSeconds` when the clash ends by itself (a request with the same key still running).
 */
export const conflict = (
  text: Text,
  {
    extra,
    readScope,
    retryAfterSeconds,
  }: { extra?: Record<string, unknown>; readScope?: string; retryAfterSeconds?: number } = {},
) =>
  new ApiError({
    statusCode: 409,
    code: 'conflict',
    text,
    extra,
    extraScope: readScope,
    headers: retryAfterSeconds === undefined ? undefined : retryAfter(retryAfterSeconds),
  });

/** A 410: the events after a cursor are gone (SPEC §14's retention). */
export const cursorExpired = (text: Text) => new ApiError({ statusCode: 410, code: 'cursor_expired', text });

/** SPEC §21: a merge older than the events kept can no longer be undone. */
export const mergeExpired = (text: Text) => new ApiError({ statusCode: 410, code: 'merge_expired', text });

export const preconditionFailed = () =>
  new ApiError({ statusCode: 412, code: 'precondition_failed', text: messages.preconditionFailed });

export const payloadTooLarge = () =>
  new ApiError({ statusCode: 413, code: 'payload_too_large', text: messages.payloadTooLarge });

export const unsupportedMediaType = () =>
  new ApiError({ statusCode: 415, code: 'unsupported_media_type', text: messages.unsupportedMediaType });

/** A 422: an Idempotency-Key sent again with another request (SPEC §7). */
export const idempotencyKeyReused = (text: Text) =>
  new ApiError({ statusCode: 422, code: 'idempotency_key_reused', text });

/** A 429 that says when to come back (SPEC §10). */
export const tooManyRequests = (text: Text, retryAfterSeconds: number) =>
  new ApiError({ statusCode: 429, code: 'rate_limited', text, headers: retryAfter(retryAfterSeconds) });

export const internalError = () =>
  new ApiError({ statusCode: 500, code: 'internal_error', text: messages.internalError });

export const serviceUnavailable = (text: Text = messages.serviceUnavailable, retryAfterSeconds = 5) =>
  new ApiError({ statusCode: 503, code: 'service_unavailable', text, headers: retryAfter(retryAfterSeconds) });
