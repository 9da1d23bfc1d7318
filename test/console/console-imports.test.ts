import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import { assertAccessible, assertFocused, CHROMIUM, ConsoleBrowser, hasChromium, tabTo } from './console-browser.js';

const SCOPES = ['leads:read', 'leads:write', 'customers:read', 'customers:write'];
/** Three leads, the second with an e-mail that is none. */
const CSV =
  'name,email,source\nAna Souza,ana@import.example,planilha\nBruno,not-an-email,planilha\nCaio Lima,caio@import.example,planilha\n';

describe("the console's import page: dry run, progress, refused rows, cancel and revert (SPEC §18, §23)", {
  skip: hasChromium ? false : `${CHROMIUM} is not installed`,
}, () => {
  const harness = new ConsoleBrowser();
  const api = harness.api.bind(harness);
  const leadsFrom = async (source: string) => (await api('GET', `/leads?source=${source}&sort=createdAt`)).body;

  before(async () => {
    await harness.start('Importadora', SCOPES);
  });
  after(() => harness.stop());

  const openPage = async (page: Page) => {
    await page.getByRole('navigation').getByRole('link', { name: 'Importar' }).click();
    await page.getByRole('heading', { name: 'Importar', level: 1 }).waitFor();
  };
  const choose = (page: Page, name: string, text: string, label = 'Arquivo (CSV ou NDJSON)') =>
    page.getByLabel(label).setInputFiles({ name, mimeType: 'text/csv', buffer: Buffer.from(text) });
  /** Reaches `target` with Tab and presses Enter on it: the page is usable by keyboard alone. */
  const press = async (page: Page, target: Locator) => {
    await tabTo(page, target);
    await page.keyboard.press('Enter');
  };
  const status = (page: Page) => page.locator('.import-run .import-status');
  const count = (page: Page, which: string) => page.locator(`.import-run dd[data-count="${which}"]`).textContent();

  it('a dry run counts and lists the bad row, writing nothing; the import then runs to the end; revert takes it back and lists what it skipped', async () => {
    const { context, page, troubles } = await harness.openConsole();
    await harness.signIn(page);
    await openPage(page);
    await choose(page, 'leads.csv', CSV);

    await press(page, page.getByRole('button', { name: 'Simular (não grava nada)' }));
    await status(page).getByText('Simulação concluída: 3 de 3 linhas conferidas, nada foi gravado.').waitFor();
    await assertFocused(page.getByRole('heading', { name: 'Simulação: leads.csv' }));
    assert.deepEqual([await count(page, 'created'), await count(page, 'failed')], ['2', '1']);
    const refused = page.locator('.import-errors[data-phase="import"] li');
    await refused.first().waitFor();
    assert.deepEqual((await refused.allTextContents()).map(squeeze), [
      "Linha 2 email Campo 'email': deve ser um e-mail válido.",
    ]);
    assert.deepEqual(await leadsFrom('planilha'), [], 'a dry run writes nothing');

    await press(page, page.getByRole('button', { name: 'Importar este arquivo' }));
    await status(page).getByText('Concluída: 3 de 3 linhas.').waitFor();
    assert.equal(
      await page.locator('.import-run [role="status"]').first().textContent(),
      'Concluída: 3 de 3 linhas.',
      'told to screen readers',
    );
    const progress = page.getByRole('progressbar', { name: 'Progresso' });
    assert.equal(await progress.getAttribute('value'), await progress.getAttribute('max'), 'the bar at its end');
    assert.deepEqual(
      [await count(page, 'created'), await count(page, 'updated'), await count(page, 'failed')],
      ['2', '0', '1'],
    );
    await refused.first().waitFor();
    assert.match(squeeze(await refused.first().textContent()), /^Linha 2 email /);
    const [ana, caio] = await leadsFrom('planilha');
    assert.deepEqual([ana.name, caio.name], ['Ana Souza', 'Caio Lima']);

    // Changed since the import: the revert leaves Caio as he is, and says so.
    assert.equal((await api('PUT', `/leads/${caio._id}`, { score: 50 })).status, 200);
    await press(page, page.getByRole('button', { name: 'Desfazer a importação' }));
    await press(page, page.getByRole('button', { name: 'Sim, desfazer' }));
    await page
      .locator('.import-revert')
      .getByText('Importação desfeita: 1 apagado(s), 0 restaurado(s), 1 mantido(s) por terem mudado depois.')
      .waitFor();
    const skipped = page.locator('.import-errors[data-phase="revert"] li');
    await skipped.first().waitFor();
    assert.equal(await skipped.count(), 1);
    assert.match(squeeze(await skipped.first().textContent()), new RegExp(`^Linha 3 ${caio._id} `));
    assert.deepEqual(
      (await leadsFrom('planilha')).map((lead: { name: string }) => lead.name),
      ['Caio Lima'],
    );
    assert.equal(await page.getByRole('button', { name: 'Desfazer a importação' }).count(), 0, 'once per import');
    assert.deepEqual(troubles, []);
    await context.close();
  });

  it('cancels an import while it runs (in English)', async () => {
    const rows = Array.from({ length: 30_000 }, (_, index) =>
      index % 1000 === 0 ? `Bad ${index},nope,massa` : `Row ${index},row${index}@massa.example,massa`,
    );
    const { context, page, troubles } = await harness.openConsole({ locale: 'en-US' });
    await harness.signIn(page, harness.token, true);
    await page.getByRole('navigation').getByRole('link', { name: 'Import' }).click();
    await choose(page, 'many.csv', `name,email,source\n${rows.join('\n')}\n`, 'File (CSV or NDJSON)');
    await page.getByRole('button', { name: 'Import', exact: true }).click();
    await press(page, page.getByRole('button', { name: 'Cancel the import' }));
    await status(page)
      .getByText(/^Cancelled after [\d,]+ of 30,000 rows\.$/)
      .waitFor();
    assert.equal(await page.locator('.import-run').getAttribute('data-status'), 'cancelled');
    assert.equal(await page.getByRole('button', { name: 'Cancel the import' }).count(), 0);
    assert.ok((await leadsFrom('massa')).length < 30_000);
    assert.deepEqual(troubles, []);
    await context.close();
  });

  it('pages the refused rows ("load more", the focus on the first new one), reverts, and passes axe at 360 px', async () => {
    const bad = Array.from({ length: 25 }, (_, index) => `Bad ${index},nope${index},axe`);
    const { context, page, troubles } = await harness.openConsole({
      viewport: { width: 360, height: 740 },
      bypassCSP: true,
    });
    await harness.signIn(page);
    await openPage(page);
    await assertAccessible(page, 'import form', 360);
    await choose(page, 'ruins.csv', `name,email,source\nDora,dora@axe.example,axe\n${bad.join('\n')}\n`);
    await page.getByLabel('Registros que já existem').selectOption('email');
    await page.getByRole('button', { name: 'Importar', exact: true }).click();
    await status(page).getByText('Concluída: 26 de 26 linhas.').waitFor();
    const refused = page.locator('.import-errors[data-phase="import"] li');
    await refused.first().waitFor();
    assert.equal(await refused.count(), 20);
    await press(page, page.getByRole('button', { name: 'Carregar mais' }));
    await page.waitForFunction(() => document.querySelectorAll('.import-errors li').length === 25);
    await assertFocused(refused.nth(20));
    assert.equal(await page.getByRole('button', { name: 'Carregar mais' }).count(), 0);
    await assertAccessible(page, 'an import with its refused rows', 360);
    await page.getByRole('button', { name: 'Desfazer a importação' }).click();
    await assertAccessible(page, 'the question before a revert', 360);
    await page.getByRole('button', { name: 'Sim, desfazer' }).click();
    await page
      .locator('.import-revert')
      .getByText(/^Importação desfeita: 1 apagado/)
      .waitFor();
    await assertAccessible(page, 'a reverted import', 360);
    assert.deepEqual(await leadsFrom('axe'), []);
    assert.deepEqual(troubles, []);
    await context.close();
  });
});

/** An element's text with its runs of white space as one space. */
function squeeze(text: string | null): string {
  return (text ?? '').replace(/\s+/g, ' ').trim();
}
