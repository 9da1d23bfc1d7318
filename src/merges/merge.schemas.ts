import { type Static, type TSchema, Type } from 'typebox';
import { Nullable, Timestamp } from '../shared/schemas.js';

const Id = Type.String({ format: 'uuid' });

export const MergeBody = Type.Object(
  {
    targetId: { ...Id, description: 'The record kept.' },
    sourceIds: Type.Array(Id, {
      minItems: 1,
      maxItems: 10,
      uniqueItems: true,
      description: 'The records merged into it, then deleted (1–10).',
    }),
    fields: Type.Optional(
      Type.Record(Type.String({ maxLength: 60 }), Id, {
        maxProperties: 100,
        description:
          '`<field>` or `custom.<key>` → the id (the target or a source) whose value to keep. Without a choice a ' +
          "field keeps the target's value, else takes the most recently updated source's that has one.",
        examples: [{ phone: '0190a0f2-5a3c-7d4e-9f10-2b3c4d5e6f70' }],
      }),
    ),
    dryRun: Type.Optional(Type.Boolean({ description: 'Answer the record the merge would make, and write nothing.' })),
  },
  {
    additionalProperties: false,
    examples: [
      {
        targetId: '0190a0f2-5a3c-7d4e-9f10-2b3c4d5e6f70',
        sourceIds: ['0190a0f2-6b4d-7e5f-8a21-3c4d5e6f7081'],
        fields: { phone: '0190a0f2-6b4d-7e5f-8a21-3c4d5e6f7081' },
      },
    ],
  },
);
export type MergeBody = Static<typeof MergeBody>;

const MergeInfo = Type.Object(
  {
    id: Nullable(
      Type.String({ format: 'uuid', description: 'Give it to `POST /merges/{id}/undo`; null on a dry run.' }),
    ),
    targetId: Id,
    sourceIds: Type.Array(Id),
    createdAt: Nullable(Timestamp),
  },
  { additionalProperties: false },
);

/** A merge's answer: the merge, and the record it made (of the resource's object). */
export function mergeAnswer(record: TSchema) {
  return Type.Object({ merge: MergeInfo, record }, { additionalProperties: false });
}

export const UndoQuery = Type.Object(
  {
    force: Type.Optional(
      Type.Boolean({
        description:
          'Undo even what later changes block, keeping them: a field of the target changed since stays, a source ' +
          'goes back without a unique value another record took since.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type UndoQuery = Static<typeof UndoQuery>;

export const UndoAnswer = Type.Object(
  {
    mergeId: Id,
    targetId: Id,
    restoredIds: Type.Array(Id, { description: 'The records put back, with their ids.' }),
  },
  { additionalProperties: false },
);
