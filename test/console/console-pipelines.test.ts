import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { CHROMIUM, ConsoleBrowser, hasChromium } from './console-browser.js';

const SCOPES = ['leads:read', 'leads:write', 'pipelines:write'];
const CLINIC_STAGES = [
  { key: 'scheduled', label: 'Agendado', kind: 'open' },
  { key: 'attended', label: 'Compareceu', kind: 'open' },
  { key: 'enrolled', label: 'Matrícula', kind: 'won' },
  { key: 'gave_up', label: 'Desistiu', kind: 'lost' },
];
/** A board column shows this many cards before "load more". */
const PER_COLUMN = 20;

interface Stage {
  key: string;
  label: string;
  kind: string;
}

describe("the console's pipelines: the picker and the board's columns (SPEC §18, §20)", {
  skip: hasChromium ? false : `${CHROMIUM} is not installed`,
}, () => {
  const harness = new ConsoleBrowser();
  const api = harness.api.bind(harness);
  let standard: { id: string; stages: Stage[] };
  let clinic: string;
  /** The clinic's leads by name; "Agendado 1" is the one its column shows last (updated first). */
  const leads = new Map<string, string>();

  const lead = async (name: string, pipeline: string | undefined, status: string) => {
    const created = await api('POST', '/leads', { name, phone: '1', pipeline, status });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    leads.set(name, created.body._id);
  };

  before(async () => {
    await harness.start('Pipelines', SCOPES);
    standard = (await api('GET', '/pipelines')).body[0];
    const made = await api('POST', '/pipelines', { name: 'Clínica', stages: CLINIC_STAGES });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    clinic = made.body.id;
    for (let index = 1; index <= PER_COLUMN + 1; index++) await lead(`Agendado ${index}`, clinic, 'scheduled');
    await lead('Caio', clinic, 'attended');
    await lead('Duda', clinic, 'enrolled');
    await lead('Edu', clinic, 'gave_up');
    await lead('Ana', undefined, 'new');
    await lead('Bia', undefined, 'lost');
  });
  after(() => harness.stop());

  const columns = (page: Page) =>
    page.locator('.column').evaluateAll((found) => found.map((column) => (column as HTMLElement).dataset.status));
  // Its name is its label's, then the pipeline it shows.
  const pipelinePicker = (page: Page) => page.getByRole('main').getByRole('combobox', { name: /^Pipeline/ });

  it('the funnel and the board each choose a pipeline; the funnel ends at stages of kind won and lost', async () => {
    const { context, page, troubles } = await harness.openConsole();
    await harness.signIn(page);
    await page.locator('[data-testid="total"]').waitFor();
    await pipelinePicker(page).selectOption({ label: 'Clínica' });
    await page.locator('tr[data-status="scheduled"]').waitFor();
    const summary = (await api('GET', `/leads/summary?pipeline=${clinic}`)).body;
    assert.equal(await page.locator('[data-testid="total"]').textContent(), String(summary.total));
    const rows = await page
      .locator('table.stages tbody tr')
      .evaluateAll((found) => found.map((row) => (row as HTMLElement).dataset.status));
    assert.deepEqual(rows, ['scheduled', 'attended', 'enrolled', 'gave_up']);
    // Reached the first stage: every lead but the one in the stage of kind lost, whatever its name.
    const reached = page.locator('tr[data-status="scheduled"] td').nth(1);
    assert.equal(await reached.textContent(), String(summary.total - 1));
    assert.equal(await page.locator('tr[data-status="gave_up"] th').textContent(), 'Desistiu');
    assert.equal(await page.locator('tr[data-status="gave_up"] td').nth(1).textContent(), '—');

    // The board opens on the pipeline the funnel chose; its picker switches the columns.
    await page.getByRole('link', { name: 'Quadro' }).click();
    await page.locator(`.card[data-id="${leads.get('Caio')}"]`).waitFor();
    assert.deepEqual(await columns(page), ['scheduled', 'attended', 'enrolled', 'gave_up']);
    assert.equal(await page.locator('.column[data-status="attended"] .stage-label').textContent(), 'Compareceu');
    await pipelinePicker(page).selectOption(standard.id);
    await page.locator(`.card[data-id="${leads.get('Ana')}"]`).waitFor();
    assert.deepEqual(
      await columns(page),
      standard.stages.map((stage) => stage.key),
    );
    assert.equal(await page.locator(`.card[data-id="${leads.get('Caio')}"]`).count(), 0);
    assert.deepEqual(troubles, []);
    await context.close();
  });

  it('a column counts its cards and loads more: the 21st card comes with "load more"', async () => {
    const { context, page, troubles } = await harness.openConsole();
    await harness.signIn(page);
    await page.getByRole('link', { name: 'Quadro' }).click();
    await pipelinePicker(page).selectOption({ label: 'Clínica' });
    const column = page.locator('.column[data-status="scheduled"]');
    await column.locator('.card').first().waitFor();
    await page.locator('.column[data-status="gave_up"] .card').waitFor();
    assert.equal(await column.locator('.card').count(), PER_COLUMN);
    assert.equal(await column.locator('.column-count').textContent(), `${PER_COLUMN}+`);
    // Newest change first: the lead made first is the 21st.
    const oldest = column.locator(`.card[data-id="${leads.get('Agendado 1')}"]`);
    assert.equal(await oldest.count(), 0);
    assert.equal(await page.locator('.column[data-status="attended"] .column-count').textContent(), '1');
    await column.getByRole('button', { name: 'Carregar mais — Agendado' }).click();
    await oldest.waitFor();
    assert.equal(await column.locator('.card').count(), PER_COLUMN + 1);
    assert.equal(await column.locator('.column-count').textContent(), `${PER_COLUMN + 1}`);
    assert.equal(await column.getByRole('button', { name: /Carregar mais/ }).count(), 0);
    assert.deepEqual(troubles, []);
    await context.close();
  });

  it("the Leads page filters by pipeline, its status a select of that pipeline's stages", async () => {
    const { context, page, troubles } = await harness.openConsole();
    await harness.signIn(page);
    await page.getByRole('link', { name: 'Leads', exact: true }).click();
    const status = page.getByRole('main').getByRole('combobox', { name: 'Status' });
    await status.waitFor();
    await pipelinePicker(page).selectOption({ label: 'Clínica' });
    const options = await status.locator('option').allTextContents();
    assert.deepEqual(options, ['todos', ...CLINIC_STAGES.map((stage) => stage.label)]);
    await status.selectOption({ label: 'Compareceu' });
    const answered = page.waitForResponse((response) => response.url().includes('status=attended'));
    await page.getByRole('button', { name: 'Aplicar' }).click();
    assert.match((await answered).url(), new RegExp(`pipeline=${clinic}`));
    await page.locator(`.records li[data-id="${leads.get('Caio')}"]`).waitFor();
    assert.equal(await page.locator('.records li').count(), 1);

    await pipelinePicker(page).selectOption(standard.id);
    assert.deepEqual(await status.locator('option').allTextContents(), [
      'todos',
      ...standard.stages.map((stage) => stage.label),
    ]);
    assert.deepEqual(troubles, []);
    await context.close();
  });
});
