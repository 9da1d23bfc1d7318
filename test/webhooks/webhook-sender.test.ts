import assert from 'node:assert/strict';
import type dns from 'node:dns';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import ipaddr from 'ipaddr.js';
import { RequestFilteringHttpAgent } from 'request-filtering-agent';
import { Webhook } from 'standardwebhooks';
import { SPECIAL_CIDRS } from '../../src/webhooks/special-addresses.js';
import { checkedLookup, sendWebhook, type WebhookRequest } from '../../src/webhooks/webhook-sender.js';
import { newWebhookSecret } from '../../src/webhooks/webhook-signature.js';
import {
  isPublicAddress,
  TargetLookupUnavailable,
  type TargetPolicy,
  targetProblem,
} from '../../src/webhooks/webhook-target.js';
import { freePort } from '../helpers/free-port.js';

interface Received {
  readonly path: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: Buffer;
}

const PRODUCTION: TargetPolicy = { allowHttp: false, allowPrivate: false };
const LOCAL: TargetPolicy = { allowHttp: true, allowPrivate: true };
const LONG_ANSWER = 'abcdefghij'.repeat(512);

/** A real receiver on 127.0.0.1; each path answers in its own way. */
function startReceiver() {
  const received: Received[] = [];
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const path = req.url ?? '';
    received.push({ path, headers: req.headers, body: Buffer.concat(chunks) });
    if (path === '/ok') res.end('thanks');
    else if (path === '/fail') res.writeHead(500).end(LONG_ANSWER);
    else if (path === '/redirect') res.writeHead(302, { location: '/redirect-target' }).end();
    else if (path === '/stall-body') res.writeHead(200).write('partial');
    else if (path !== '/hang') res.writeHead(404).end();
  });
  return { server, received, pathsReceived: () => received.map((request) => request.path) };
}

describe('webhook delivery (SPEC §15)', () => {
  const receiver = startReceiver();
  let base: string;

  before(async () => {
    receiver.server.listen(0, '127.0.0.1');
    await once(receiver.server, 'listening');
    base = `http://127.0.0.1:${(receiver.server.address() as AddressInfo).port}`;
  });

  after(async () => {
    receiver.server.closeAllConnections();
    receiver.server.close();
    await once(receiver.server, 'close');
  });

  const deliver = (path: string, overrides: Partial<WebhookRequest> = {}) =>
    sendWebhook({
      url: `${base}${path}`,
      id: 'evt_01J0000000000000000000000',
      body: '{"id":"evt_01J0000000000000000000000","type":"lead.created","data":{"name":"João ✓"}}',
      secrets: [newWebhookSecret()],
      timeoutMs: 5_000,
      policy: LOCAL,
      ...overrides,
    });
  const lastReceived = (path: string) => {
    const request = receiver.received.filter((candidate) => candidate.path === path).at(-1);
    assert.ok(request, `the receiver got nothing on ${path}`);
    return request;
  };
  const signedHeaders = (request: Received) => ({
    'webhook-id': String(request.headers['webhook-id']),
    'webhook-timestamp': String(request.headers['webhook-timestamp']),
    'webhook-signature': String(request.headers['webhook-signature']),
  });

  it('posts the body byte for byte with the Standard Webhooks headers', async () => {
    const secret = newWebhookSecret();
    const before = Math.floor(Date.now() / 1000);
    const outcome = await deliver('/ok', { secrets: [secret] });
    const request = lastReceived('/ok');

    assert.deepEqual(
      { ...outcome, durationMs: 0 },
      { ok: true, status: 200, error: null, response: 'thanks', durationMs: 0 },
    );
    assert.ok(outcome.durationMs >= 0);
    const body = '{"id":"evt_01J0000000000000000000000","type":"lead.created","data":{"name":"João ✓"}}';
    assert.deepEqual(request.body, Buffer.from(body, 'utf8'));
    assert.equal(request.headers['content-type'], 'application/json');
    assert.equal(request.headers['content-length'], String(Buffer.byteLength(body)));
    assert.equal(request.headers['user-agent'], 'Funil-Webhooks/1');
    assert.equal(request.headers['webhook-id'], 'evt_01J0000000000000000000000');
    assert.match(String(request.headers['webhook-timestamp']), /^\d+$/);
    assert.ok(Math.abs(Number(request.headers['webhook-timestamp']) - before) <= 2);
    assert.match(String(request.headers['webhook-signature']), /^v1,[A-Za-z0-9+/]{43}=$/);
  });

  it('signs so that the independent standardwebhooks library verifies it', async () => {
    const secret = newWebhookSecret();
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    await deliver('/ok', { secrets: [secret] });
    const request = lastReceived('/ok');
    new Webhook(secret).verify(request.body.toString('utf8'), signedHeaders(request));
    assert.throws(() => new Webhook(newWebhookSecret()).verify(request.body.toString('utf8'), signedHeaders(request)));
  });

  it('signs with both secrets during a rotation, each verifying on its own', async () => {
    const [oldSecret, newSecret] = [newWebhookSecret(), newWebhookSecret()];
    await deliver('/ok', { secrets: [oldSecret, newSecret] });
    const request = lastReceived('/ok');
    const payload = request.body.toString('utf8');

    assert.equal(String(request.headers['webhook-signature']).split(' ').length, 2);
    new Webhook(oldSecret).verify(payload, signedHeaders(request));
    new Webhook(newSecret).verify(payload, signedHeaders(request));
    assert.throws(() => new Webhook(newWebhookSecret()).verify(payload, signedHeaders(request)));
  });

  it('a 500 is a failure carrying the status and only the first 1 KiB of the answer', async () => {
    const outcome = await deliver('/fail');
    assert.equal(outcome.ok, false);
    assert.equal(outcome.status, 500);
    assert.equal(outcome.error, null);
    assert.equal(outcome.response, LONG_ANSWER.slice(0, 1024));
  });

  it('does not follow a redirect', async () => {
    const outcome = await deliver('/redirect');
    assert.equal(outcome.ok, false);
    assert.equal(outcome.status, 302);
    assert.ok(receiver.pathsReceived().includes('/redirect'));
    assert.ok(!receiver.pathsReceived().includes('/redirect-target'));
  });

  it('gives up on a receiver that never answers at the timeout', { timeout: 5_000 }, async () => {
    const outcome = await deliver('/hang', { timeoutMs: 300 });
    assert.equal(outcome.ok, false);
    assert.equal(outcome.status, null);
    assert.match(outcome.error ?? '', /timed out/);
  });

  it('a 2xx whose body stalls past the timeout is not a success', { timeout: 5_000 }, async () => {
    const outcome = await deliver('/stall-body', { timeoutMs: 300 });
    assert.equal(outcome.ok, false);
    assert.equal(outcome.status, 200);
    assert.match(outcome.error ?? '', /timed out/);
    assert.equal(outcome.response, 'partial');
  });

  it('reports a refused connection', async () => {
    const outcome = await sendWebhook({
      url: `http://127.0.0.1:${await freePort()}/`,
      id: 'evt_refused',
      body: '{}',
      secrets: [newWebhookSecret()],
      timeoutMs: 5_000,
      policy: LOCAL,
    });
    assert.deepEqual(
      { ...outcome, durationMs: 0 },
      {
        ok: false,
        status: null,
        error: 'connection refused',
        response: null,
        durationMs: 0,
      },
    );
  });

  it('refuses a private target before connecting when private targets are not allowed', async () => {
    const outcome = await deliver('/ok?private', { policy: { allowHttp: true, allowPrivate: false } });
    assert.equal(outcome.ok, false);
    assert.equal(outcome.status, null);
    assert.equal(outcome.error, 'the host resolves to a non-public address (loopback)');
    assert.ok(!receiver.pathsReceived().includes('/ok?private'));
  });

  it('the connect-time filter (request-filtering-agent) refuses loopback, mapped loopback and metadata addresses', async () => {
    const agent = new RequestFilteringHttpAgent({ allowPrivateIPAddress: false, allowMetaIPAddress: false });
    const port = (receiver.server.address() as AddressInfo).port;
    for (const host of ['127.0.0.1', '::ffff:127.0.0.1', '169.254.169.254']) {
      const request = http.request({ host, port, path: '/ok?filtered', method: 'POST', agent });
      request.end();
      const [error] = (await once(request, 'error')) as [Error];
      // webhook-sender.ts turns this message into its error text.
      assert.match(error.message, /^DNS lookup \S+\(family:.* is not allowed/, host);
    }
    assert.ok(!receiver.pathsReceived().includes('/ok?filtered'));
  });
});

describe('webhook targets (SPEC §15)', () => {
  it('refuses http unless allowed, and anything other than http(s)', async () => {
    assert.match((await targetProblem('http://93.184.216.34/', PRODUCTION))?.en ?? '', /must use https/);
    assert.equal(await targetProblem('http://93.184.216.34/', { allowHttp: true, allowPrivate: false }), null);
    assert.match((await targetProblem('ftp://93.184.216.34/', LOCAL))?.en ?? '', /must use http or https/);
    assert.match((await targetProblem('not a url', LOCAL))?.en ?? '', /not valid/);
  });

  it('refuses a URL with credentials', async () => {
    assert.match(
      (await targetProblem('https://user:pass@93.184.216.34/', PRODUCTION))?.en ?? '',
      /user name or password/,
    );
    assert.match((await targetProblem('https://user@127.0.0.1/', LOCAL))?.en ?? '', /user name or password/);
  });

  it('refuses private, loopback, link-local and unspecified targets', async () => {
    const refused = [
      'https://127.0.0.1/',
      'https://[::1]/',
      'https://10.1.2.3/',
      'https://169.254.169.254/latest/meta-data/',
      'https://[::ffff:127.0.0.1]/',
      'https://localhost/',
      'https://0.0.0.0/',
    ];
    for (const url of refused) {
      assert.match((await targetProblem(url, PRODUCTION))?.en ?? '', /non-public address/, url);
    }
  });

  it('tells a name that does not exist (400) from a lookup that failed for now (503, retried at delivery)', async () => {
    const failing = (code: string) => async () => {
      throw Object.assign(new Error(`lookup failed: ${code}`), { code });
    };
    for (const code of ['EAI_AGAIN', 'ETIMEOUT', 'ESERVFAIL']) {
      await assert.rejects(
        targetProblem('https://hooks.example.com/', PRODUCTION, failing(code)),
        (error: unknown) => error instanceof TargetLookupUnavailable && error.code === code,
      );
    }
    for (const code of ['ENOTFOUND', 'ENODATA']) {
      const problem = await targetProblem('https://hooks.example.com/', PRODUCTION, failing(code));
      assert.equal(problem?.en, 'the host does not resolve', code);
    }
    const resolved = await targetProblem('https://hooks.example.com/', PRODUCTION, async () => [
      { address: '93.184.216.34' },
    ]);
    assert.equal(resolved, null);
  });

  it('accepts a public address, and a private one when private targets are allowed', async () => {
    assert.equal(await targetProblem('https://93.184.216.34/hooks?token=x', PRODUCTION), null);
    assert.equal(await targetProblem('https://[2606:4700::1111]/', PRODUCTION), null);
    assert.equal(await targetProblem('https://127.0.0.1/', { allowHttp: false, allowPrivate: true }), null);
  });

  it('keeps refusal reasons short whatever the URL', async () => {
    const long = 'a'.repeat(10_000);
    for (const url of [`ftp://${long}/`, `https://${long}:x@93.184.216.34/`, `https://[::1]/${long}`, long]) {
      const problem = await targetProblem(url, PRODUCTION);
      assert.ok(problem !== null && problem.en.length <= 150 && problem.pt.length <= 150, problem?.en ?? 'accepted');
    }
  });

  it('only ordinary unicast addresses are public', () => {
    for (const address of ['93.184.216.34', '8.8.8.8', '2606:4700::1111', '::ffff:93.184.216.34']) {
      assert.equal(isPublicAddress(address), true, address);
    }
    const notPublic = [
      ['127.0.0.1', '::1', '::ffff:127.0.0.1'], // loopback, also IPv4-mapped
      ['10.0.0.1', '172.16.0.1', '192.168.1.1', '::ffff:10.0.0.1', 'fc00::1'], // private, unique local
      ['169.254.169.254', 'fe80::1'], // link-local (cloud metadata)
      ['224.0.0.1', 'ff02::1', '255.255.255.255'], // multicast, broadcast
      ['0.0.0.0', '::'], // unspecified
      ['100.64.0.1', '192.0.2.1', '2001:db8::1'], // carrier-grade NAT, documentation
      ['2002:7f00:1::', '2001::1'], // 6to4, Teredo
      ['fec0::1', '64:ff9b:1::1', '::10.0.0.1', '::8.8.8.8'], // site-local, NAT64 local-use, IPv4-compatible
      ['64:ff9b::a00:1', '64:ff9b::7f00:1'], // NAT64 of 10.0.0.1 and 127.0.0.1
      ['localhost', 'not an address', ''],
    ].flat();
    for (const address of notPublic) assert.equal(isPublicAddress(address), false, address);
    // NAT64 of a public address reaches that address.
    assert.equal(isPublicAddress('64:ff9b::5db8:d822'), true);
  });

  it('refuses every range of the IANA special-purpose registries at save, naming the rule, never the address', async () => {
    for (const cidr of SPECIAL_CIDRS) {
      const [network, bits] = cidr.split('/') as [string, string];
      const parsed = ipaddr.parse(network);
      const bytes = parsed.toByteArray();
      // The range's first address, and one inside it (its last byte set, where the prefix leaves it free).
      const inside = [...bytes];
      if (Number(bits) < bytes.length * 8) inside[bytes.length - 1] = 0x2a;
      for (const address of [parsed.toString(), ipaddr.fromByteArray(inside).toString()]) {
        const host = parsed.kind() === 'ipv6' ? `[${address}]` : address;
        const problem = await targetProblem(`https://${host}/hook`, PRODUCTION);
        assert.ok(problem, `${address} (${cidr}) accepted`);
        assert.match(problem.en, /non-public address \([a-z0-9 -]+\)$/i, cidr);
        assert.ok(!problem.en.includes(address) && !problem.pt.includes(address), `${problem.en} shows the address`);
      }
    }
  });

  it('refuses at connect a name that resolves to any special address (DNS rebinding), naming the rule only', async () => {
    // The connection's own lookup, over a resolver that answers each range in turn.
    const lookupOf = (address: string) =>
      checkedLookup(((_host: string, _options: unknown, done: (e: null, a: dns.LookupAddress[]) => void) =>
        done(null, [{ address, family: address.includes(':') ? 6 : 4 }])) as unknown as typeof dns.lookup);
    for (const cidr of SPECIAL_CIDRS) {
      const address = cidr.split('/')[0] as string;
      for (const all of [false, true]) {
        const error = await new Promise<Error | null>((resolve) =>
          lookupOf(address)('rebinding.example', { all }, (found: Error | null) => resolve(found)),
        );
        assert.match(
          error?.message ?? 'accepted',
          /^the connection was refused: the host resolves to a non-public address \(/,
          cidr,
        );
        assert.ok(!error?.message.includes(address) || address === '::', `${error?.message} shows the address`);
      }
    }
    const found = await new Promise<string>((resolve) =>
      lookupOf('93.184.216.34')('public.example', {}, (_error, address) => resolve(String(address))),
    );
    assert.equal(found, '93.184.216.34');
    const outcome = await sendWebhook({
      url: 'http://localhost:9/hook',
      id: 'msg_rebind',
      body: '{}',
      secrets: [newWebhookSecret()],
      timeoutMs: 2_000,
      // Past the check at save (a name that resolved elsewhere then): the connection's own lookup refuses.
      policy: { allowHttp: true, allowPrivate: false },
    });
    assert.equal(outcome.ok, false);
    assert.doesNotMatch(outcome.error ?? '', /127\.0\.0\.1|::1/);
  });
});
