import { type Static, type TSchema, Type } from 'typebox';
import { StringEnum } from '../shared/schemas.js';

export const IdParams = Type.Object(
  { id: Type.String({ format: 'uuid', description: 'The record id (UUID).' }) },
  { additionalProperties: false },
);
export type IdParams = Static<typeof IdParams>;

export const ErrorBody = Type.Object(
  {
    success: Type.Literal(false),
    error: Type.String({ description: 'Human-readable message, pt-BR by default; English with Accept-Language: en.' }),
    code: Type.String({ description: 'Stable machine code, independent of language.' }),
    details: Type.Optional(
      Type.Array(Type.Object({ field: Type.String(), message: Type.String() }, { additionalProperties: false })),
    ),
    existingId: Type.Optional(Type.String({ format: 'uuid' })),
    blockers: Type.Optional(
      Type.Array(
        Type.Object(
          {
            recordId: Type.String({ format: 'uuid' }),
            field: Type.String(),
            reason: StringEnum(['changed_since', 'taken', 'target_deleted', 'pipeline_deleted', 'stage_removed']),
          },
          { additionalProperties: false },
        ),
        { description: 'On an undo of a merge refused: what would lose a later change.' },
      ),
    ),
    leadCount: Type.Optional(
      Type.Integer({
        minimum: 1,
        description: 'On a pipeline change refused: how many leads it would leave stageless.',
      }),
    ),
    requestId: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

export const SuccessBody = Type.Object({ success: Type.Literal(true) }, { additionalProperties: false });

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: '`validation_failed`: a field, parameter or body is invalid; `details` names the fields.',
  403: '`forbidden`: token missing, malformed, unknown, expired or revoked; scope lacking; tenant inactive.',
  404: '`not_found`: no such record in your tenant.',
  409: '`conflict`: a request with the same Idempotency-Key is still running; retry once it has answered.',
  412: '`precondition_failed`: If-Match does not match the current ETag; nothing changed.',
  413: '`payload_too_large`: the body is over 1 MiB.',
  415: '`unsupported_media_type`: the body is not JSON.',
  422: '`idempotency_key_reused`: the Idempotency-Key was used with another body.',
  429: '`rate_limited`: too many requests; wait Retry-After seconds.',
  500: '`internal_error`: unexpected; quote `requestId`.',
  503: '`service_unavailable`: the database is away or the server is shutting down; retry after Retry-After.',
};

/**
 * A route's own 409 `conflict`, described: what clashes (the API document adds the Idempotency-Key
 * one on a POST).
 */
export function conflictResponse(text: string) {
  return { 409: { ...ErrorBody, description: `\`conflict\`: ${text}` } };
}

/** A success answer with what it holds said, for the API document. */
export function answer<T extends TSchema>(schema: T, description: string): T {
  return { ...schema, description };
}

/** The documented error answers of a route, each in the SPEC §2 shape. */
export function errorResponses<const S extends readonly number[]>(...statuses: S) {
  return Object.fromEntries(
    statuses.map((status) => [status, { ...ErrorBody, description: ERROR_DESCRIPTIONS[status] ?? 'Error.' }]),
  ) as unknown as { [K in S[number]]: typeof ErrorBody };
}
