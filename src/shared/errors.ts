import { fieldMessage, fieldMessages, messages, type Text } from './messages.js';

export type ErrorCode =
  | 'validation_failed'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'precondition_failed'
  | 'cursor_expired'
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

/** An error that the error handler renders in the SPEC §2 shape. Handlers throw these, never send. */
export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: ErrorCode,
    readonly text: Text,
    readonly details?: readonly FieldIssue[],
    readonly extra?: Readonly<Record<string, unknown>>,
    readonly headers?: Readonly<Record<string, string>>,
    /** When set, `extra` goes only to callers whose token has this scope (SPEC §2: `existingId`). */
    readonly extraScope?: string,
  ) {
    super(text.en);
    this.name = 'ApiError';
  }
}

export const validationFailed = (details: readonly FieldIssue[], text?: Text) =>
  new ApiError(400, 'validation_failed', text ?? details[0]?.message ?? messages.invalidRequest, details);

/** Text the database cannot store (the NUL character): a 400 on the body. */
export const unstorableText = () =>
  validationFailed([{ field: 'body', message: fieldMessage('body', fieldMessages.noNul()) }]);

export const forbidden = (text: Text) => new ApiError(403, 'forbidden', text);

export const notFound = (text: Text) => new ApiError(404, 'not_found', text);

/** A 409; `extra` (the holder's id) reaches only a caller whose token has `readScope`. */
export const conflict = (text: Text, extra?: Record<string, unknown>, readScope?: string) =>
  new ApiError(409, 'conflict', text, undefined, extra, undefined, readScope);

export const preconditionFailed = () => new ApiError(412, 'precondition_failed', messages.preconditionFailed);

/** A 429 that says when to come back (SPEC §10). */
export const tooManyRequests = (text: Text, retryAfterSeconds: number) =>
  new ApiError(429, 'rate_limited', text, undefined, undefined, { 'retry-after': String(retryAfterSeconds) });

export const serviceUnavailable = (text: Text = messages.serviceUnavailable, retryAfterSeconds = 5) =>
  new ApiError(503, 'service_unavailable', text, undefined, undefined, {
    'retry-after': String(retryAfterSeconds),
  });
