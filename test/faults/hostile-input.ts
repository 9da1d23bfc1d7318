import fc from 'fast-check';
import { Customer } from '../../src/customers/customer.schemas.js';
import { leadSchemas } from '../../src/leads/lead.schemas.js';

/** Strings that have broken services before: injections, odd Unicode, prototype keys, limits. */
const SQL = [
  "' OR '1'='1",
  "'; DROP TABLE leads; --",
  '"; select pg_sleep(10); --',
  "x' union select token_hash from api_tokens --",
  '1; update leads set tenant_id = null; --',
  '$1',
  '$$ $body$',
  "%' OR 1=1 --",
  '\\',
  "\\'",
];
const JSONISH = ['{"$gt":""}', '{"__proto__":{"isAdmin":true}}', 'null', 'true', '[]', '{}', '1e999', 'NaN'];
const UNICODE = [
  '\u0000',
  'a\u0000b',
  '\uD800',
  'x\uDFFFy',
  '\u202Egnp.exe',
  '\uFEFFname',
  '\u200B',
  'ｆｕｌｌｗｉｄｔｈ',
  'e\u0301',
  '😀👩‍👩‍👧‍👦',
  'İı',
  'ß',
  '\r\n',
  '\t',
  '\u2028\u2029',
  '\u001b[31m',
];
export const PROTO_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf'];
const LIMITS = [
  '',
  ' ',
  '   padded   ',
  'a'.repeat(100),
  'a'.repeat(101),
  'a'.repeat(200),
  'a'.repeat(201),
  `${'a'.repeat(64)}@${'b'.repeat(185)}.com`,
  `${'a'.repeat(64)}@${'b'.repeat(186)}.com`,
  'n'.repeat(10_000),
  'n'.repeat(10_001),
];
/** Every field either resource knows, `id` included: new fields are fuzzed as soon as they exist. */
const FIELDS = [...new Set([...Object.keys(leadSchemas.Lead.properties), ...Object.keys(Customer.properties)])];

const text = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.string({ unit: 'grapheme', maxLength: 30 }),
  // Any UTF-16 code unit: lone surrogates included.
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.constantFrom(...SQL, ...JSONISH, ...UNICODE, ...PROTO_KEYS, ...LIMITS),
  fc.emailAddress(),
  fc.constantFrom('new', 'won', 'qualified', 'active', 'blocked', 'company', 'individual', 'NEW', 'Won '),
  fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
  fc.constantFrom('2026-11-21', '2026-13-40T25:61:00Z', '2026-11-21T10:00:00', '+275760-09-13T00:00:00.000Z'),
);

const number = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(0, 100, 101, -1, 0.5, 1.005, 1e21, -0, Number.MAX_SAFE_INTEGER, 999_999_999_999.99, 1e12, 0.001),
);

const key = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...FIELDS) },
  { weight: 1, arbitrary: fc.constantFrom(...PROTO_KEYS) },
  { weight: 1, arbitrary: text },
);

const { value } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', maxDepth: 4 },
    text,
    number,
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(key, tie('value'), { maxKeys: 3, noNullPrototype: true }),
  ),
}));

/** Mostly a plausible record with some fields wrong, plus keys nobody asked for. */
const objectBody = fc
  .tuple(
    fc.record(
      {
        name: fc.oneof(text, value),
        email: fc.oneof(fc.emailAddress(), text, value),
        phone: fc.oneof(text, value),
        status: fc.oneof(text, value),
        score: fc.oneof(number, value),
        value: fc.oneof(number, value),
        notes: fc.oneof(text, value),
      },
      { requiredKeys: [] },
    ),
    fc.dictionary(key, value, { maxKeys: 3, noNullPrototype: true }),
  )
  .map(([known, extra]) => ({ ...known, ...extra }));

const ONE_MIB = 1024 * 1024;
const RAW_BODIES = [
  '',
  ' ',
  'null',
  '[]',
  '"a string"',
  '{',
  '{"name":',
  '\uFEFF{"name":"Bom","phone":"1"}',
  '{"name":"Dup","name":"Dup 2","phone":"1"}',
  '{"name":"Big","phone":"1","score":1e999}',
  '{"name":"\\ud800","phone":"1"}',
  '{"name":"Nul \\u0000","phone":"1"}',
  '{"name":"Proto","phone":"1","__proto__":{"isAdmin":true}}',
  '{"name":"Ctor","phone":"1","constructor":{"prototype":{"isAdmin":true}}}',
  '{"name":"Deep","phone":"1","notes":{"a":{"__proto__":{"isAdmin":true}}}}',
  `${'['.repeat(10_000)}${']'.repeat(10_000)}`,
  `{"name":"Deep","phone":"1","notes":${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}}`,
  `{"name":"Huge","phone":"1","notes":"${'h'.repeat(ONE_MIB)}"}`,
  `{"name":"Wide","phone":"1",${Array.from({ length: 5_000 }, (_, i) => `"k${i}":${i}`).join(',')}}`,
  `{"name":"Many","email":"m@example.com","notes":"${'m'.repeat(900_000)}"}`,
];

/** Valid bodies at and inside the limits (SPEC §3, §4), so that the writes also succeed. */
const name = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 200 }).filter((n) => n.trim() !== '');
const validLead = fc.record(
  {
    name,
    email: fc.emailAddress(),
    phone: fc.oneof(fc.constant(''), fc.constant(null), fc.string({ unit: 'grapheme', maxLength: 50 })),
    source: fc.oneof(fc.constant(null), fc.string({ maxLength: 100 })),
    status: fc.constantFrom('new', 'contacted', 'qualified', 'proposal', 'negotiation', 'won', 'lost'),
    score: fc.integer({ min: 0, max: 100 }),
    lastContact: fc.oneof(
      fc.constant(null),
      fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
    ),
    notes: fc.oneof(fc.constant(''), fc.string({ unit: 'grapheme', maxLength: 300 })),
  },
  { requiredKeys: ['name', 'email'] },
);
const validCustomer = fc.record(
  {
    name,
    email: fc.emailAddress(),
    firstName: fc.string({ maxLength: 100 }),
    lastName: fc.string({ maxLength: 100 }),
    phone: fc.string({ maxLength: 50 }),
    status: fc.constantFrom('active', 'inactive', 'blocked'),
    type: fc.constantFrom('individual', 'company'),
    value: fc.integer({ min: 0, max: 99_999_999_999_999 }).map((cents) => cents / 100),
    autoPayment: fc.boolean(),
    notes: fc.string({ unit: 'grapheme', maxLength: 300 }),
  },
  { requiredKeys: ['name', 'email'] },
);
const validStatus = fc.record({
  status: fc.constantFrom('new', 'won', 'lost', 'active', 'inactive', 'blocked'),
});

/** Request bodies, as the raw text sent: JSON of all shapes, and things that only look like JSON. */
const body = fc.oneof(
  { weight: 10, arbitrary: fc.oneof(validLead, validCustomer, validStatus).map((o) => JSON.stringify(o)) },
  { weight: 10, arbitrary: objectBody.map((o) => JSON.stringify(o)) },
  { weight: 2, arbitrary: fc.constantFrom(...RAW_BODIES) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)) },
  { weight: 1, arbitrary: fc.string({ maxLength: 50 }) },
  {
    weight: 1,
    arbitrary: objectBody.map((o) => JSON.stringify(o).replace(/^\{/, '{"__proto__":{"isAdmin":true},')),
  },
);

/** Printable ASCII, as HTTP header values are. */
const headerText = fc.oneof(
  fc.string({ unit: 'grapheme-ascii', maxLength: 40 }),
  fc.constantFrom('', ' ', 'x'.repeat(300), "' OR 1=1 --", '*', '"1"', 'W/"1"', '"1", "2"', '"-1"', '"999999999999"'),
);

const optional = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: undefined, freq: 2 });

function compact(headers: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([, v]) => v !== undefined)) as Record<string, string>;
}

const contentType = fc.constantFrom(
  'application/json',
  'application/json; charset=utf-8',
  'Application/JSON',
  'application/json; charset=latin1',
  'application/json;charset=UTF-8; foo=bar',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/jsonx',
  'application/json, text/plain',
);

/** Headers a write sends besides its token. */
const writeHeaders = fc
  .record({
    'content-type': optional(contentType),
    'idempotency-key': optional(headerText),
    'if-match': optional(headerText),
    'accept-language': optional(fc.constantFrom('en', 'en-US', 'pt-BR', 'fr', '*', 'en;q=0', 'x'.repeat(500))),
  })
  .map(compact);

/** Every header a caller controls, its token included (sometimes mangled). */
function headers(token: string) {
  return fc
    .record({
      authorization: optional(
        fc.oneof(
          fc.constantFrom(
            `Bearer ${token}`,
            `bearer ${token}`,
            `Bearer  ${token}`,
            `Basic ${token}`,
            `Bearer ${token}x`,
            `Bearer ${token.slice(0, -1)}`,
            `Bearer ${token}, Bearer ${token}`,
            'Bearer ',
            `Bearer fnl_${'A'.repeat(43)}`,
            `Bearer ${'x'.repeat(5_000)}`,
            token,
          ),
          headerText.map((h) => `Bearer ${h}`),
        ),
      ),
      'content-type': optional(contentType),
      'idempotency-key': optional(headerText),
      'if-match': optional(headerText),
      'if-none-match': optional(headerText),
      'accept-language': optional(headerText),
      accept: optional(fc.constantFrom('application/json', 'text/html', 'application/xml', '*/*', '')),
      'x-request-id': optional(headerText),
      'x-forwarded-for': optional(fc.constantFrom('1.2.3.4', '::1, 10.0.0.1', 'garbage')),
      'content-encoding': optional(fc.constantFrom('gzip', 'br', 'identity', 'x')),
    })
    .map(compact);
}

const LIST_PARAMS = [
  'limit',
  'cursor',
  'sort',
  'status',
  'source',
  'type',
  'email',
  'q',
  'updatedSince',
  'createdSince',
  'scoreMin',
  'scoreMax',
];
const PARAM_VALUES = [
  '0',
  '1',
  '1000',
  '1001',
  '-1',
  '1.5',
  '1e3',
  '0x10',
  'createdAt',
  '-createdAt',
  '--name',
  '-score',
  'lastContact',
  'value',
  'new,won',
  'new,,won',
  ',',
  '2026-11-21T10:00:00Z',
  '2026-11-21',
  'abc.def',
  'eyJ4IjoxfQ.AAAA',
  'a'.repeat(2_001),
  '%',
  '%25',
];
/** Parameters sent raw, not encoded: what a careless or hostile client writes into a URL. */
const RAW_QUERIES = [
  '?%zz',
  '?q=%E0%A4%A',
  '?&&&',
  '?===',
  '?limit',
  '?limit=',
  '?q[]=x',
  '?q[a]=x',
  '?%00=1',
  '?q=a+b',
];

const query = fc.oneof(
  {
    weight: 8,
    arbitrary: fc
      .array(
        fc.tuple(
          fc.oneof(
            { weight: 6, arbitrary: fc.constantFrom(...LIST_PARAMS) },
            { weight: 1, arbitrary: fc.constantFrom(...PROTO_KEYS) },
            { weight: 1, arbitrary: text },
          ),
          fc.oneof(fc.constantFrom(...PARAM_VALUES), text, number.map(String)),
        ),
        { maxLength: 5 },
      )
      .map((pairs) => (pairs.length ? `?${pairs.map(([k, v]) => `${encode(k)}=${encode(v)}`).join('&')}` : '')),
  },
  { weight: 1, arbitrary: fc.constantFrom(...RAW_QUERIES) },
);

/** encodeURIComponent refuses a lone surrogate: then the URL carries its replacement. */
function encode(value: string): string {
  return encodeURIComponent(value.replace(/\p{Surrogate}/gu, '\uFFFD'));
}

/** Path ids that are no id at all, already encoded for a URL where needed. */
const id = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 40 }).map(encode),
  fc.constantFrom(
    '0',
    'null',
    'undefined',
    '__proto__',
    'constructor',
    '..',
    '%2e%2e',
    '%2F',
    '%00',
    '%zz',
    '%',
    'a'.repeat(150),
    '00000000-0000-0000-0000-000000000000',
    'ffffffff-ffff-ffff-ffff-ffffffffffff',
    '01234567-89ab-cdef-0123-456789abcdef',
    encode("' OR '1'='1"),
  ),
);

/** For one route: half the time a body valid for it (so writes go through), else anything. */
function bodyFor(path: string): fc.Arbitrary<string> {
  const valid = path.endsWith('/status') ? validStatus : path.startsWith('/leads') ? validLead : validCustomer;
  return fc.oneof(
    valid.map((o) => JSON.stringify(o)),
    body,
  );
}

export const hostile = { body, bodyFor, writeHeaders, headers, query, id, encode };
