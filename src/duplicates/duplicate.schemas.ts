import { type Static, type TSchema, Type } from 'typebox';
import { StringEnum } from '../shared/schemas.js';

const Kind = StringEnum(['email', 'phone'], {
  description: '`email`: the normalised e-mail; `phone`: the phone in E.164, read in the tenant’s phoneCountry.',
});

export const DuplicateGroupsQuery = Type.Object(
  {
    kind: Type.Optional(Kind),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 1000, default: 100, description: 'Groups per page (1–1000).' }),
    ),
    cursor: Type.Optional(
      Type.String({ minLength: 1, maxLength: 2000, description: 'Opaque: the X-Next-Cursor of the previous page.' }),
    ),
  },
  { additionalProperties: false },
);
export type DuplicateGroupsQuery = Static<typeof DuplicateGroupsQuery>;

export const DuplicateGroupList = Type.Array(
  Type.Object(
    {
      key: Type.Object(
        { kind: Kind, value: Type.String({ description: 'The key the records share.' }) },
        { additionalProperties: false },
      ),
      count: Type.Integer({ minimum: 2, description: 'How many records share it.' }),
      ids: Type.Array(Type.String({ format: 'uuid' }), { description: 'Their ids, the first 100 by id.' }),
    },
    { additionalProperties: false },
  ),
);

/** The records that share a key with one, each with the keys it shares. */
export function duplicatesOfSchema(object: TSchema) {
  return Type.Array(
    Type.Object(
      {
        matchedOn: Type.Array(Kind, { description: 'The keys it shares with the record asked about.' }),
        record: object,
      },
      { additionalProperties: false },
    ),
  );
}
