import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileFilter, FilterCache, type FilteredEvent } from '../../src/events/event-filter.js';
import type { EventFilter } from '../../src/events/event-filter.schemas.js';

const lead = {
  _id: '0190a0a0-0000-7000-8000-000000000001',
  name: 'Ana',
  email: null,
  status: 'qualified',
  score: 60,
  lastContact: '2026-11-21T10:00:00.000Z',
  custom: { tier: 'gold', tags: ['vip', 'b2b'], size: 12 },
};

function event(object: Record<string, unknown> = lead, type = 'lead.updated', changedFields: string[] = []) {
  return { type, data: { object, changedFields } } satisfies FilteredEvent;
}

/** Whether `where` lets `lead` through. */
const where = (condition: Record<string, unknown>, object: Record<string, unknown> = lead) =>
  compileFilter({ where: condition }).matches(event(object));

/** SPEC §22: a filter is compiled once into closures; these are its rules, event by event. */
describe('event filters, compiled (SPEC §22)', () => {
  it('eq and neq compare a field exactly; on a list they mean contains and does not contain', () => {
    assert.equal(where({ status: { eq: 'qualified' } }), true);
    assert.equal(where({ status: { eq: 'Qualified' } }), false);
    assert.equal(where({ score: { eq: 60 } }), true);
    assert.equal(where({ score: { eq: '60' } }), false, 'no coercion between text and numbers');
    assert.equal(where({ status: { neq: 'won' } }), true);
    assert.equal(where({ status: { neq: 'qualified' } }), false);
    assert.equal(where({ 'custom.tags': { eq: 'vip' } }), true);
    assert.equal(where({ 'custom.tags': { neq: 'vip' } }), false);
    assert.equal(where({ 'custom.tags': { neq: 'retail' } }), true);
  });

  it('in matches one of the values; on a list, one of its items', () => {
    assert.equal(where({ status: { in: ['won', 'qualified'] } }), true);
    assert.equal(where({ status: { in: ['won', 'lost'] } }), false);
    assert.equal(where({ 'custom.tags': { in: ['retail', 'b2b'] } }), true);
    assert.equal(where({ 'custom.tags': { in: ['retail'] } }), false);
  });

  it('gte and lte order numbers by value and text (timestamps too) in text order, never across types', () => {
    assert.equal(where({ score: { gte: 60 } }), true);
    assert.equal(where({ score: { gte: 61 } }), false);
    assert.equal(where({ score: { lte: 60 } }), true);
    assert.equal(where({ score: { lte: 59.5 } }), false);
    assert.equal(where({ score: { gte: '50' } }), false, 'a number is not compared with text');
    assert.equal(where({ name: { gte: 'Ana' } }), true);
    assert.equal(where({ name: { lte: 'Alberto' } }), false);
    assert.equal(where({ lastContact: { gte: '2026-11-21' } }), true);
    assert.equal(where({ lastContact: { lte: '2026-11-20' } }), false);
    // The same instant written otherwise: compared as the API writes it.
    assert.equal(where({ lastContact: { gte: '2026-11-21T10:00:00Z' } }), true);
    assert.equal(where({ lastContact: { lte: '2026-11-21T07:00:00-03:00' } }), true);
    assert.equal(where({ lastContact: { gte: '2026-11-21T10:00:00.001Z' } }), false);
    assert.equal(where({ 'custom.size': { gte: 10 } }), true);
  });

  it('exists tells a value from null or no field at all', () => {
    assert.equal(where({ name: { exists: true } }), true);
    assert.equal(where({ email: { exists: true } }), false, 'null is no value');
    assert.equal(where({ email: { exists: false } }), true);
    assert.equal(where({ phone: { exists: false } }), true, 'a field the object lacks');
    assert.equal(where({ 'custom.missing': { exists: false } }), true);
    assert.equal(where({ 'custom.tier': { exists: true } }), true);
  });

  it('every comparison of a missing or null field is false, but exists: false', () => {
    for (const test of [{ eq: 'x' }, { neq: 'x' }, { in: ['x'] }, { gte: 0 }, { lte: 'z' }, { exists: true }]) {
      assert.equal(where({ phone: test }), false, `phone ${JSON.stringify(test)}`);
      assert.equal(where({ email: test }), false, `email (null) ${JSON.stringify(test)}`);
      assert.equal(where({ 'custom.nope': test }), false, `custom.nope ${JSON.stringify(test)}`);
    }
    // An erased record's events keep only its id.
    assert.equal(where({ status: { neq: 'won' } }, { _id: lead._id }), false);
  });

  it('never reads what is not the object’s own: prototype names are missing fields', () => {
    assert.equal(where({ constructor: { exists: true } }), false);
    assert.equal(where({ toString: { exists: false } }), true);
    assert.equal(where({ 'custom.constructor': { exists: true } }), false);
  });

  it('all, any and not combine tests, nested', () => {
    const won = { status: { eq: 'won' } };
    const qualified = { status: { eq: 'qualified' } };
    const high = { score: { gte: 50 } };
    assert.equal(where({ all: [qualified, high] }), true);
    assert.equal(where({ all: [won, high] }), false);
    assert.equal(where({ any: [won, high] }), true);
    assert.equal(where({ any: [won, { score: { gte: 90 } }] }), false);
    assert.equal(where({ not: won }), true);
    assert.equal(where({ not: qualified }), false);
    assert.equal(where({ not: { phone: { eq: 'x' } } }), true, 'not of a false test on a missing field');
    assert.equal(where({ all: [{ any: [won, { not: { all: [qualified, { score: { lte: 10 } }] } }] }, high] }), true);
    assert.equal(where({ all: [{ any: [won, { not: { all: [qualified, high] } }] }, high] }), false);
  });

  it('changedFields passes an update that changed a watched field, and every creation and deletion', () => {
    const filter = compileFilter({ changedFields: ['status', 'custom.tier'] });
    assert.equal(filter.matches(event(lead, 'lead.updated', ['name', 'score'])), false);
    assert.equal(filter.matches(event(lead, 'lead.status_changed', ['status'])), true);
    assert.equal(filter.matches(event(lead, 'lead.updated', ['custom.tier'])), true);
    assert.equal(filter.matches(event(lead, 'lead.updated', ['custom.size'])), false);
    assert.equal(filter.matches(event(lead, 'lead.converted', ['status', 'customerId'])), true);
    assert.equal(filter.matches(event(lead, 'lead.created', [])), true);
    assert.equal(filter.matches(event(lead, 'customer.deleted', [])), true);
  });

  it('types and excludeActors decide before the event is rendered; self is whoever the caller says', () => {
    const other = '0190a0a0-0000-7000-8000-0000000000aa';
    const self = '0190a0a0-0000-7000-8000-0000000000bb';
    const filter = compileFilter({ types: ['lead.created'], excludeActors: ['self', other.toUpperCase()] });
    assert.equal(filter.admits('lead.created', null, self), true, 'a change of no token');
    assert.equal(filter.admits('lead.created', self, self), false);
    assert.equal(filter.admits('lead.created', other, self), false, 'the other token, by id in any case');
    assert.equal(filter.admits('lead.created', self, other), true, 'self is whoever the caller says');
    assert.equal(filter.admits('lead.created', self, null), true);
    assert.equal(filter.admits('lead.updated', null, self), false);
    assert.deepEqual(filter.excludedTokens(self).sort(), [other, self].sort());
    assert.deepEqual(filter.excludedTokens(null), [other]);
    assert.deepEqual(compileFilter({}).excludedTokens(self), []);
    assert.equal(compileFilter({}).admits('customer.deleted', self, self), true);
  });

  it('compiles a filter once, and forgets the least recently used past its size', () => {
    const cache = new FilterCache(2);
    const a: EventFilter = { types: ['lead.created'], where: { all: [{ score: { gte: 1 } }] } };
    const first = cache.compile(a);
    assert.equal(cache.compile(JSON.parse(JSON.stringify(a)) as EventFilter), first, 'the same filter, read again');
    const updated = cache.compile({ types: ['lead.updated'] });
    cache.compile(a); // used again: now the most recent
    cache.compile({ types: ['lead.deleted'] });
    assert.equal(cache.cached, 2);
    assert.equal(cache.compile(a), first, 'the most recently used stays');
    assert.notEqual(cache.compile({ types: ['lead.updated'] }), updated, 'the least recently used was dropped');
  });
});
