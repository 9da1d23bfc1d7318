import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assertAccessible, CHROMIUM, ConsoleBrowser, hasChromium } from './console-browser.js';

const SCOPES = ['leads:read', 'webhooks:read', 'webhooks:write'];
const TARGET = 'https://93.184.216.34/funil-hook';

describe("the console's webhook filters: read in words, edited as JSON (SPEC §18, §22)", {
  skip: hasChromium ? false : `${CHROMIUM} is not installed`,
}, () => {
  const harness = new ConsoleBrowser();
  const api = harness.api.bind(harness);
  let hookId: string;

  before(async () => {
    // No delivery: only the subscription and its filter are looked at.
    await harness.start('Filters', SCOPES, { FUNIL_WEBHOOKS_DELIVER: 'false' });
    const made = await api('POST', '/webhooks', {
      url: TARGET,
      events: ['lead.created', 'lead.status_changed'],
      filter: {
        changedFields: ['status'],
        where: {
          all: [
            { status: { in: ['won', 'lost'] } },
            { any: [{ score: { gte: 50 } }, { not: { email: { exists: true } } }] },
          ],
        },
        excludeActors: ['self'],
      },
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    hookId = made.body.id;
  });
  after(() => harness.stop());

  it('shows the filter in words, and saves an edited one; the API names the faulty part of a bad one', async () => {
    const { context, page, troubles } = await harness.openConsole({ locale: 'en-US' });
    await harness.signIn(page, harness.token, true);
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('button', { name: new RegExp(TARGET) }).click();
    const summary = page.getByTestId('filter-summary');
    await summary.waitFor();
    const words = (await summary.textContent()) ?? '';
    assert.match(words, /Updates only when it changes\s*status/);
    assert.match(words, /status is one of "won", "lost" and \(score ≥ 50 or not \(email has a value\)\)/);
    assert.match(words, /Except changes by\s*the webhook's own owner \(self\)/);

    await page.getByRole('button', { name: 'Edit the filter' }).click();
    const editor = page.getByLabel('Filter (JSON)');
    assert.deepEqual(JSON.parse(await editor.inputValue()), (await api('GET', `/webhooks/${hookId}`)).body.filter);
    await editor.fill('{"where": ');
    await page.getByRole('button', { name: 'Save' }).click();
    await page
      .getByRole('alert')
      .getByText(/not valid JSON/)
      .waitFor();
    await editor.fill('{"where": {"all": [{"status": {"eq": "won"}}, {"scroe": {"gte": 1}}]}}');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.locator('[role="alert"] li[data-field="filter.where.all.1.scroe"]').waitFor();
    // The browser's own line for the refused request: the page itself reports no error.
    assert.deepEqual(troubles, [
      'console: Failed to load resource: the server responded with a status of 400 (Bad Request)',
    ]);
    troubles.length = 0;
    await editor.fill('{"types": ["lead.created"], "where": {"score": {"gte": 70}}}');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Filter saved.').waitFor();
    assert.deepEqual((await api('GET', `/webhooks/${hookId}`)).body.filter, {
      types: ['lead.created'],
      where: { score: { gte: 70 } },
    });
    assert.match((await summary.textContent()) ?? '', /Only the types\s*lead\.created\s*Only when\s*score ≥ 70/);

    await page.getByRole('button', { name: 'Edit the filter' }).click();
    await editor.fill('');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('No filter: it receives every event of lead.created, lead.status_changed.').waitFor();
    assert.equal((await api('GET', `/webhooks/${hookId}`)).body.filter, null);
    assert.deepEqual(troubles, []);
    await context.close();
  });

  it('is usable at 360 px with the editor open, and passes an automated accessibility check (axe-core)', async () => {
    const { context, page, troubles } = await harness.openConsole({
      viewport: { width: 360, height: 740 },
      bypassCSP: true,
    });
    await harness.signIn(page);
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.locator('.records button').first().click();
    await page.getByRole('button', { name: 'Editar o filtro' }).click();
    await page.getByLabel('Filtro (JSON)').waitFor();
    await assertAccessible(page, 'webhook filter', 360);
    assert.deepEqual(troubles, []);
    await context.close();
  });
});
