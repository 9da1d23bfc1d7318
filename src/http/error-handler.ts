import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isDatabaseUnavailable, isInvalidTextError } from '../db/errors.js';
import {
  ApiError,
  internalError,
  notFound,
  payloadTooLarge,
  serviceUnavailable,
  unstorableText,
  unsupportedMediaType,
  validationFailed,
} from '../shared/errors.js';
import { languageOf, messages, type Text } from '../shared/messages.js';
import { schemaError } from '../shared/validation.js';

export { schemaError };

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Replaces the message of a 400 whose first fault is a required field missing or empty. */
    requiredFieldText?: Text;
  }
}

/** One renderer for every error of every route: the SPEC §2 shape, in the caller's language. */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const apiError = toApiError(error, request);
    logFailure(request, error, apiError);
    return sendApiError(apiError, request, reply);
  });
  app.setNotFoundHandler((request, reply) => sendApiError(notFound(messages.routeNotFound), request, reply));
}

/** A line for an unexpected error, and for a database outage or a timeout; none for the rest. */
export function logFailure(request: FastifyRequest, error: unknown, apiError: ApiError): void {
  if (apiError.code === 'internal_error') {
    request.log.error({ err: error }, 'request failed');
  } else if (apiError.statusCode >= 500 && apiError !== error) {
    // A database outage or a timeout: worth a line. A 503 thrown on purpose (load shedding, shutdown)
    // is not, as its request line says it all and a burst of them must not flood the log.
    request.log.warn({ err: error }, 'request failed: service unavailable');
  }
}

/**
 * What Fastify's router refuses before any route or hook runs: a path that does not decode
 * (`/leads/%zz`) or a path parameter over the length limit. Neither names anything that exists, so
 * both are the 404 of an id that is not a UUID (SPEC §2), in the one error shape, not Fastify's own.
 */
export function renderFrameworkError(_error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  reply.header('x-request-id', request.id);
  return sendApiError(notFound(messages.routeNotFound), request, reply);
}

export function sendApiError(error: ApiError, request: FastifyRequest, reply: FastifyReply) {
  if (error.headers) reply.headers(error.headers);
  // The body is built here, so it is sent as-is rather than through a route's response schema.
  return reply
    .code(error.statusCode)
    .type('application/json; charset=utf-8')
    .serializer(JSON.stringify)
    .send(errorBody(error, request));
}

/** The SPEC §2 body of an error, in the caller's language; `existingId` only to a caller who may read it. */
export function errorBody(error: ApiError, request: FastifyRequest): Record<string, unknown> {
  const language = languageOf(request.headers['accept-language']);
  const body: Record<string, unknown> = {
    success: false,
    error: error.text[language],
    code: error.code,
  };
  if (error.details?.length) {
    body.details = error.details.map((d) => ({ field: d.field, message: d.message[language] }));
  }
  if (error.extraScope === undefined || request.principal?.scopes.has(error.extraScope))
    Object.assign(body, error.extra);
  if (error.statusCode >= 500 && error.code === 'internal_error') body.requestId = request.id;
  return body;
}

function toApiError(error: FastifyError, request: FastifyRequest): ApiError {
  if (error instanceof ApiError) return error;
  if (error.validation) {
    return schemaError(error.validation, error.validationContext, request.routeOptions.config.requiredFieldText);
  }
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return payloadTooLarge();
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return error.statusCode === 415 ? unsupportedMediaType() : validationFailed([], messages.invalidRequest);
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return validationFailed([], messages.malformedJson);
    // FUNIL_REQUEST_TIMEOUT_MS ran out (a database that stopped answering, mostly): SPEC §2's 503.
    case 'FUNIL_REQUEST_DEADLINE':
      return serviceUnavailable();
  }
  return apiErrorOf(error);
}

/** What a service's failure answers: its own SPEC §2 error, or the one its cause maps to (else a 500). */
export function apiErrorOf(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (isInvalidTextError(error)) return unstorableText();
  if (isDatabaseUnavailable(error)) return serviceUnavailable();
  const { statusCode } = error as { statusCode?: unknown };
  if (statusCode === 400) return validationFailed([], messages.invalidRequest);
  if (statusCode === 413) return payloadTooLarge();
  if (statusCode === 415) return unsupportedMediaType();
  return internalError();
}
