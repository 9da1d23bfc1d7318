import { randomUUID } from 'node:crypto';
import { maxHeaderSize, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { Text } from '../shared/messages.js';

const texts = {
  headersTooLarge: (kib: number): Text => ({
    pt: `A linha da requisição e seus cabeçalhos passam de ${kib} KiB (um filtro longo na URL, talvez).`,
    en: `The request line and its headers exceed ${kib} KiB (a long filter in the URL, perhaps).`,
  }),
  malformed: { pt: 'A requisição HTTP está malformada.', en: 'The HTTP request is malformed.' },
  invalidUrl: {
    pt: 'O endereço tem caracteres que precisam ser codificados (percent-encoding: é como %C3%A9, espaço como %20).',
    en: 'The URL holds characters that must be percent-encoded (é as %C3%A9, a space as %20).',
  },
  timedOut: {
    pt: 'A requisição não chegou inteira a tempo.',
    en: 'The request did not arrive in full in time.',
  },
};

/**
 * What Node refuses before a request exists: headers past its limit (431), a request it cannot
 * parse (400), one that did not arrive in time (408). Answered in the SPEC §2 shape with an
 * X-Request-Id, as every answer is, instead of Fastify's own body; in pt-BR, since no header could
 * be read to ask for English. Installed as Fastify's `clientErrorHandler`.
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  // A reset connection has no one to answer (Node's own rule).
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, text] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, texts.headersTooLarge(Math.floor(maxHeaderSize / 1024))]
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, texts.timedOut]
        : [400, error.code === 'HPE_INVALID_URL' ? texts.invalidUrl : texts.malformed];
  if (socket.writable) {
    const body = JSON.stringify({ success: false, error: text.pt, code: 'validation_failed' });
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${randomUUID()}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}
