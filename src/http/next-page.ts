import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * SPEC §6: while more rows exist, `Link: <absolute URL>; rel="next"` and `X-Next-Cursor`; the
 * link is this request's URL with `param` (the cursor's parameter: `cursor`, or the feed's `after`) set.
 */
export function setNextPage(request: FastifyRequest, reply: FastifyReply, cursor: string, param = 'cursor'): void {
  reply.header('link', `<${nextPageUrl(request, cursor, param)}>; rel="next"`);
  reply.header('x-next-cursor', cursor);
}

function nextPageUrl(request: FastifyRequest, cursor: string, param: string): string {
  let url: URL;
  try {
    url = new URL(request.url, `${request.protocol}://${request.host}`);
  } catch {
    // A Host header that is no host: the link still works against the address that was called.
    url = new URL(request.url, `${request.protocol}://localhost`);
  }
  url.searchParams.set(param, cursor);
  return url.toString();
}
