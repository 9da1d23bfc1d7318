import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { whenClosed } from '../../src/http/response-closed.js';
import { RawConnection } from '../helpers/raw-http.js';

describe('whenClosed: work tied to a response runs once it closes, however late it asks', () => {
  const responses: ServerResponse[] = [];
  const server = createServer((_request, response) => void responses.push(response));
  let url = '';
  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const requestOn = async (connection: RawConnection): Promise<ServerResponse> => {
    const count = responses.length;
    connection.write('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    while (responses.length === count) await sleep(1);
    return responses.at(-1) as ServerResponse;
  };

  it('runs once the answer is out, not before', async () => {
    const connection = await RawConnection.open(url);
    const response = await requestOn(connection);
    let ran = 0;
    whenClosed(response, () => ran++);
    await sleep(20);
    assert.equal(ran, 0);
    response.end('ok');
    await connection.readAnswer();
    await sleep(20);
    assert.equal(ran, 1);
    connection.destroy();
  });

  it('runs at once, and once, for a response whose client hung up before it asked', async () => {
    const connection = await RawConnection.open(url);
    const response = await requestOn(connection);
    connection.destroy();
    while (!response.closed) await sleep(1);
    let ran = 0;
    whenClosed(response, () => ran++);
    assert.equal(ran, 1, 'a listener added now would never hear the close');
    await sleep(20);
    assert.equal(ran, 1);
  });
});
