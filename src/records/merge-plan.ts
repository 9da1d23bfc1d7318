import { validationFailed } from '../shared/errors.js';
import { fieldMessage, type Text } from '../shared/messages.js';

/** A merge as asked (SPEC §21): the record kept, those merged into it, and whose value each field takes. */
export interface MergeInput {
  readonly targetId: string;
  readonly sourceIds: readonly string[];
  /** `<field>` or `custom.<key>` → the id (the target's or a source's) whose value to keep. */
  readonly fields?: Readonly<Record<string, string>> | undefined;
  readonly dryRun?: boolean | undefined;
}

type RecordValues = Readonly<Record<string, unknown>> & { readonly updatedAt?: unknown };

const notAChoice: Text = {
  pt: 'deve ser o id do registro mantido ou de um dos mesclados',
  en: 'must be the id of the record kept or of one of those merged',
};
const notAField: Text = { pt: 'não é um campo que a mescla escolhe', en: 'is not a field a merge chooses' };
const notDistinct: Text = {
  pt: 'deve listar registros distintos, sem o registro mantido',
  en: 'must list distinct records, not the one kept',
};

/** The 400s of a merge body that no record needs to be read for. */
export function checkMergeInput(input: MergeInput, fields: readonly string[]): void {
  const { targetId, sourceIds } = input;
  if (new Set(sourceIds).size !== sourceIds.length || sourceIds.includes(targetId)) {
    throw validationFailed([{ field: 'sourceIds', message: fieldMessage('sourceIds', notDistinct) }]);
  }
  for (const [field, id] of Object.entries(input.fields ?? {})) {
    const name = `fields.${field}`;
    const named = field !== 'custom' && fields.includes(field);
    if (!named && !/^custom\.[a-z][a-z0-9_]{0,39}$/.test(field)) {
      throw validationFailed([{ field: name, message: fieldMessage(name, notAField) }]);
    }
    if (id !== targetId && !sourceIds.includes(id)) {
      throw validationFailed([{ field: name, message: fieldMessage(name, notAChoice) }]);
    }
  }
}

/**
 * The values the target keeps (SPEC §21): field by field, the value of the record `fields`
 * names, else the target's own value, else the most recently updated source's that has one.
 * Fields of one group (a lead's pipeline and status) are taken together, from one record. Custom
 * values are chosen key by key, as `custom.<key>`. Returns the fields whose value changes.
 */
export function mergedValues(
  input: MergeInput,
  records: ReadonlyMap<string, RecordValues>,
  keys: readonly string[],
  groups: readonly (readonly string[])[],
): Record<string, unknown> {
  const target = records.get(input.targetId) as RecordValues;
  const sources = input.sourceIds
    .map((id) => records.get(id) as RecordValues)
    .sort((a, b) => String(b.updatedAt).localeCompare(String(a.updatedAt)));
  const choice = input.fields ?? {};
  /** The record a value comes from: the one chosen, else the target if it has one, else the newest source that has. */
  const holderOf = (has: (record: RecordValues) => boolean, chosen: string | undefined) => {
    if (chosen !== undefined) return records.get(chosen) as RecordValues;
    return has(target) ? target : (sources.find(has) ?? target);
  };
  const changes: Record<string, unknown> = {};
  const grouped = new Set(groups.flat());
  const all = [...groups, ...keys.filter((key) => key !== 'custom' && !grouped.has(key)).map((key) => [key])];
  for (const members of all) {
    if (!members.every((member) => keys.includes(member))) continue;
    const has = (record: RecordValues) => members.some((member) => record[member] != null);
    const holder = holderOf(
      has,
      members.map((member) => choice[member]).find((id) => id !== undefined),
    );
    for (const member of members) {
      if (JSON.stringify(holder[member]) !== JSON.stringify(target[member])) changes[member] = holder[member];
    }
  }
  if (keys.includes('custom')) {
    const customOf = (record: RecordValues) => (record.custom ?? {}) as Record<string, unknown>;
    const customKeys = new Set([target, ...sources].flatMap((record) => Object.keys(customOf(record))));
    const custom: Record<string, unknown> = {};
    for (const key of [...customKeys].sort()) {
      const holder = holderOf((record) => customOf(record)[key] != null, choice[`custom.${key}`]);
      const value = customOf(holder)[key];
      if (value != null) custom[key] = value;
    }
    if (JSON.stringify(custom) !== JSON.stringify(sortedKeys(customOf(target)))) changes.custom = custom;
  }
  return changes;
}

function sortedKeys(object: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(object).sort(([a], [b]) => (a < b ? -1 : 1)));
}
