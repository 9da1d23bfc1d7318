import { language, t } from './i18n.js';

/**
 * The rows of a side-by-side comparison, in the order of the record: each a field a merge chooses
 * (SPEC §21), or fields it takes together from one record (a lead's pipeline and status, a
 * customer's name and its parts), named in a merge's `fields` by `key`. `optional` rows show only
 * when a record has a value.
 */
const ROWS = {
  leads: [
    { key: 'name' },
    { key: 'email' },
    { key: 'phone' },
    { key: 'source' },
    { key: 'status', members: ['pipeline', 'status'], label: 'field_stage' },
    { key: 'score' },
    { key: 'lastContact' },
    { key: 'notes' },
    { key: 'externalId' },
    { key: 'customerId', optional: true },
  ],
  customers: [
    { key: 'name', members: ['name', 'firstName', 'lastName'] },
    { key: 'email' },
    { key: 'phone' },
    { key: 'status' },
    { key: 'type' },
    { key: 'value' },
    { key: 'autoPayment' },
    { key: 'notes' },
    { key: 'externalId' },
  ],
};

/** The rows for `records` of `resource`: its fields, then each custom key any of them has, as `custom.<key>`. */
export function rowsOf(resource, records) {
  const fixed = ROWS[resource]
    .filter((row) => !row.optional || records.some((record) => record[row.key] != null))
    .map((row) => ({ members: [row.key], label: `field_${row.key}`, ...row }));
  const customKeys = [...new Set(records.flatMap((record) => Object.keys(record.custom ?? {})))].sort();
  const custom = customKeys.map((key) => ({ key: `custom.${key}`, members: [`custom.${key}`], label: undefined }));
  return [...fixed, ...custom];
}

/** What a person reads as a row's name: its word, or `custom.<key>` for a custom field. */
export function rowLabel(row) {
  return row.label ? t(row.label) : row.key;
}

/** The name of a field the API gives (a blocker's `field`): its word when the console has one. */
export function fieldLabel(field) {
  const word = t(`field_${field}`);
  return word === `field_${field}` ? field : word;
}

/** A record's value of a field, or of `custom.<key>`; null when it has none. */
export function fieldValue(record, member) {
  const value = member.startsWith('custom.') ? record.custom?.[member.slice('custom.'.length)] : record[member];
  return value ?? null;
}

const holds = (row, record) => row.members.some((member) => fieldValue(record, member) !== null);

/**
 * The record whose value the merge keeps when none is chosen, as the server decides it (SPEC §21):
 * the target's own, else the most recently updated source's that has one, else the target's.
 */
export function defaultHolder(row, target, sources) {
  if (holds(row, target)) return target._id;
  const newestFirst = [...sources].sort((a, b) => String(b.updatedAt).localeCompare(String(a.updatedAt)));
  return newestFirst.find((record) => holds(row, record))?._id ?? target._id;
}

/** Whether every record has the same value in the row: then there is nothing to choose. */
export function sameInAll(row, records) {
  const shown = records.map((record) => JSON.stringify(row.members.map((member) => fieldValue(record, member))));
  return shown.every((value) => value === shown[0]);
}

/**
 * The target a comparison starts with: the oldest record (the first one Funil knew: the id other
 * systems are most likely to hold), the lower id on a tie.
 */
export function oldestFirst(records) {
  return [...records].sort((a, b) =>
    a.createdAt === b.createdAt ? (a._id < b._id ? -1 : 1) : a.createdAt < b.createdAt ? -1 : 1,
  );
}

/**
 * A row's value in `record` as text: `{ text, meta }`, `text` null when it has none. A lead's
 * pipeline and stage by their names (from `pipelines`, when known), a customer's name with its parts.
 */
export function shownValue(row, record, pipelines) {
  if (row.members.includes('pipeline')) {
    const pipeline = pipelines?.find((candidate) => candidate.id === record.pipeline);
    const stage = pipeline?.stages.find((candidate) => candidate.key === record.status);
    return { text: stage?.label ?? record.status, meta: pipeline?.name ?? record.pipeline };
  }
  if (row.members.includes('firstName')) {
    const parts = [record.firstName, record.lastName].filter((part) => part != null);
    return { text: record.name, meta: parts.length > 0 ? parts.join(' · ') : undefined };
  }
  return { text: asText(fieldValue(record, row.members[0]), row.key) };
}

/** A value as text: null stays null (shown as empty), dates readable, lists by commas. */
function asText(value, key) {
  if (value === null) return null;
  if (typeof value === 'boolean') return t(value ? 'yes' : 'no');
  if (Array.isArray(value)) return value.map(String).join(', ');
  if (typeof value === 'object') return JSON.stringify(value);
  if (typeof value === 'number') return value.toLocaleString(language === 'en' ? 'en' : 'pt-BR');
  if (key === 'lastContact' || /^\d{4}-\d{2}-\d{2}T/.test(value)) return when(value);
  return String(value);
}

/** A timestamp as "YYYY-MM-DD HH:MM" (UTC), as the record's details show it. */
export function when(timestamp) {
  return String(timestamp).replace('T', ' ').slice(0, 16);
}
