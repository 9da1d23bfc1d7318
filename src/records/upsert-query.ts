import { type Static, Type } from 'typebox';
import { StringEnum } from '../shared/schemas.js';
import { UPSERT_KEYS } from './record.service.js';

/** The query string of a create or a batch: the upsert key, if any (SPEC §13). Other parameters are ignored, as they always were. */
export const UpsertQuery = Type.Object({
  upsert: Type.Optional(
    StringEnum(UPSERT_KEYS, { description: "Update the record that holds the body's value of this field, if any." }),
  ),
});
export type UpsertQuery = Static<typeof UpsertQuery>;
