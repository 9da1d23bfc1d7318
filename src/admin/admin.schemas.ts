import { Type } from 'typebox';
import { SCOPES } from '../auth/scopes.js';
import { Nullable, StringEnum, Timestamp, TrimmedString } from '../shared/schemas.js';

const Name = TrimmedString({ minLength: 1, maxLength: 200, examples: ['Acme Ltda'] });
const Scopes = Type.Array(StringEnum(SCOPES), { minItems: 1, uniqueItems: true, examples: [['leads:write']] });

export const Tenant = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    active: Type.Boolean(),
    phoneCountry: Type.String({ description: 'The country its phones are read in when they carry no +code.' }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { additionalProperties: false },
);

const PhoneCountry = Type.String({
  pattern: '^[A-Z]{2}$',
  description: 'ISO 3166-1 alpha-2: the country a phone without a +code is read in, to match duplicates (default BR).',
  examples: ['BR'],
});

export const CreateTenant = Type.Object(
  { name: Name, phoneCountry: Type.Optional(PhoneCountry) },
  { additionalProperties: false, examples: [{ name: 'Acme Ltda' }] },
);

export const UpdateTenant = Type.Object(
  { name: Type.Optional(Name), active: Type.Optional(Type.Boolean()), phoneCountry: Type.Optional(PhoneCountry) },
  { additionalProperties: false, minProperties: 1, examples: [{ name: 'Acme S.A.', active: true }] },
);

export const CreateToken = Type.Object(
  {
    name: TrimmedString({ minLength: 1, maxLength: 200, examples: ['website form'] }),
    scopes: Scopes,
    expiresAt: Type.Optional(Nullable(Type.String({ format: 'date-time' }))),
  },
  {
    additionalProperties: false,
    examples: [{ name: 'website form', scopes: ['leads:create'], expiresAt: '2099-12-31T23:59:59Z' }],
  },
);

const tokenFields = {
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  scopes: Type.Array(Type.String()),
  tenant: Type.String({ format: 'uuid' }),
  expiresAt: Nullable(Timestamp),
  createdAt: Timestamp,
};

export const CreatedToken = Type.Object(
  { ...tokenFields, token: Type.String({ description: 'The bearer token. Shown only in this answer.' }) },
  { additionalProperties: false },
);

export const TokenSummary = Type.Object(
  {
    ...tokenFields,
    prefix: Type.String({ description: 'The first 8 characters of the token, to recognise it.' }),
    lastUsedAt: Nullable(Timestamp),
    revokedAt: Nullable(Timestamp),
  },
  { additionalProperties: false },
);

export const TenantParams = Type.Object(
  { id: Type.String({ format: 'uuid', description: "The tenant's id." }) },
  { additionalProperties: false },
);

export const TokenParams = Type.Object(
  { id: Type.String({ format: 'uuid', description: "The token's id (not its value)." }) },
  { additionalProperties: false },
);
