import { language } from './i18n.js';

const BASE = '/api/external/v1';
const TOKEN_KEY = 'funil.token';

/** The token lives in this tab's sessionStorage only (SPEC §18). */
export const session = {
  get token() {
    return sessionStorage.getItem(TOKEN_KEY);
  },
  set token(value) {
    if (value) sessionStorage.setItem(TOKEN_KEY, value);
    else sessionStorage.removeItem(TOKEN_KEY);
  },
};

/** An answer of the API that is not a 2xx: its SPEC §2 body. */
export class ApiError extends Error {
  constructor(status, body, retryAfter) {
    super(body?.error ?? `HTTP ${status}`);
    this.status = status;
    this.body = body;
    this.retryAfter = retryAfter;
  }
}

/** How many times a call refused for the tenant's share of the server (429) is made again, after Retry-After. */
const BUSY_RETRIES = 3;

/** Calls the public API with the session's token; resolves to {body, headers}. */
export async function api(path, options = {}) {
  for (let attempt = 0; ; attempt++) {
    try {
      return await call(path, options);
    } catch (failure) {
      if (!(failure instanceof ApiError) || failure.status !== 429 || attempt === BUSY_RETRIES) throw failure;
      const seconds = Number(failure.retryAfter);
      await new Promise((resolve) => setTimeout(resolve, 1000 * (Number.isFinite(seconds) ? seconds : 1)));
    }
  }
}

/**
 * `body` is sent as JSON; `file` (a File, with its `contentType`) as it is: the browser streams it
 * from the disk, never reading it whole into the page.
 */
async function call(path, { method = 'GET', body, file, contentType, headers = {}, token = session.token }) {
  const type = file ? contentType : body === undefined ? undefined : 'application/json';
  const answer = await fetch(`${BASE}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      'accept-language': language === 'en' ? 'en' : 'pt-BR',
      ...(type ? { 'content-type': type } : {}),
      ...headers,
    },
    body: file ?? (body === undefined ? undefined : JSON.stringify(body)),
  });
  const text = await answer.text();
  const parsed = text ? JSON.parse(text) : undefined;
  if (!answer.ok) throw new ApiError(answer.status, parsed, answer.headers.get('retry-after'));
  return { body: parsed, headers: answer.headers };
}
