import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { adminAuth } from '../helpers/admin-api.js';
import { assertAccessible, assertFocused, CHROMIUM, ConsoleBrowser, hasChromium, tabTo } from './console-browser.js';

const SCOPES = ['leads:read', 'leads:write', 'pipelines:write'];
const XSS = '<img src=x onerror=alert(1)>';
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

describe("the console's pipelines: the picker, the board's columns, the editor (SPEC §18, §20)", {
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

  it('a token with leads:read sees the pipelines and their stages, as text, without the editor', async () => {
    const made = await api('POST', '/pipelines', { name: XSS, stages: [{ key: 'only', label: XSS, kind: 'open' }] });
    assert.equal(made.status, 201);
    const { tenant } = (await api('GET', '/token')).body;
    const issued = await fetch(`${harness.server.url}/api/admin/v1/tenants/${tenant}/tokens`, {
      method: 'POST',
      headers: adminAuth,
      body: JSON.stringify({ name: 'read only', scopes: ['leads:read'] }),
    });
    const { context, page, troubles } = await harness.openConsole();
    await harness.signIn(page, ((await issued.json()) as { token: string }).token);
    await page.getByRole('link', { name: 'Pipelines' }).click();
    const listed = page.locator(`.pipelines > li[data-id="${made.body.id}"]`);
    await listed.waitFor();
    assert.equal(await listed.locator('h2').textContent(), `${XSS} `);
    assert.equal(await listed.locator('.stage-list .name').textContent(), XSS);
    assert.equal(await page.locator('img[src="x"]').count(), 0);
    assert.deepEqual(
      await page
        .locator(`.pipelines > li[data-id="${clinic}"] .stage-list li`)
        .evaluateAll((found) => found.map((stage) => (stage as HTMLElement).dataset.key)),
      CLINIC_STAGES.map((stage) => stage.key),
    );
    assert.equal(await page.getByRole('button', { name: 'Novo pipeline' }).count(), 0);
    assert.equal(await page.getByRole('button', { name: /^Editar/ }).count(), 0);
    await page.getByText('precisa do escopo pipelines:write').waitFor();
    assert.equal((await api('DELETE', `/pipelines/${made.body.id}`)).status, 200);
    assert.deepEqual(troubles, []);
    await context.close();
  });

  it('passes axe on the board, the pipelines page and the editor; at 360 px the board shows that it scrolls', async () => {
    const { context, page, troubles } = await harness.openConsole({
      viewport: { width: 360, height: 740 },
      bypassCSP: true,
    });
    await harness.signIn(page);
    await page.getByRole('link', { name: 'Quadro' }).click();
    await page.locator('.card').first().waitFor();
    await page.locator('.scroll-cue').waitFor();
    assert.ok(await page.locator('.sideways.more-right').isVisible());
    await assertAccessible(page, 'board', 360);

    await page.getByRole('link', { name: 'Pipelines' }).click();
    await page.getByRole('button', { name: 'Editar Clínica' }).click();
    await assertAccessible(page, 'editor', 360);
    // The question of where the leads go, as a stage that holds some is removed.
    await page.locator('.stage-row[data-key="enrolled"]').getByRole('button', { name: 'Remover etapa' }).click();
    await page.getByRole('button', { name: 'Salvar' }).click();
    await page.getByRole('group', { name: 'Para onde vão esses leads?' }).waitFor();
    await assertAccessible(page, 'where the leads go', 360);
    await page
      .getByRole('group', { name: 'Para onde vão esses leads?' })
      .getByRole('button', { name: 'Cancelar' })
      .click();
    await page.locator('.editor').getByRole('button', { name: 'Cancelar' }).click();
    await page.getByRole('button', { name: 'Novo pipeline' }).waitFor();
    await assertAccessible(page, 'pipelines', 360);
    assert.equal((await api('GET', `/pipelines/${clinic}`)).body.stages.length, CLINIC_STAGES.length, 'nothing saved');

    // Wide enough for the clinic's four columns: no cue.
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.getByRole('link', { name: 'Quadro' }).click();
    await pipelinePicker(page).selectOption({ label: 'Clínica' });
    await page.locator(`.card[data-id="${leads.get('Caio')}"]`).waitFor();
    await page.waitForFunction(() => !document.querySelector('.scroll-cue'), undefined, { timeout: 5_000 });
    assert.equal(await page.locator('.sideways.more-right').count(), 0);
    assert.deepEqual(troubles, [
      'console: Failed to load resource: the server responded with a status of 409 (Conflict)',
    ]);
    await context.close();
  });

  it('creates a pipeline by keyboard only, a stage moved up with its button', async () => {
    const { context, page, troubles } = await harness.openConsole();
    await harness.signIn(page);
    const keys = page.keyboard;
    await tabTo(page, page.getByRole('link', { name: 'Pipelines' }));
    await keys.press('Enter');
    await tabTo(page, page.getByRole('button', { name: 'Novo pipeline' }));
    await keys.press('Enter');
    const editor = page.locator('.editor');
    await assertFocused(editor.getByLabel('Nome', { exact: true }));
    await keys.type('Escola');
    await keys.press('Tab');
    await assertFocused(editor.getByLabel('Nome da etapa').first());
    await keys.type('Interessado');
    const add = editor.getByRole('button', { name: 'Adicionar etapa' });
    await tabTo(page, add);
    await keys.press('Enter');
    await assertFocused(editor.getByLabel('Nome da etapa').nth(1));
    await keys.type('Matrícula');
    await keys.press('Tab');
    await keys.press('Tab');
    await assertFocused(editor.getByLabel('Tipo').nth(1));
    await keys.press('ArrowDown');
    await tabTo(page, add);
    await keys.press('Enter');
    await assertFocused(editor.getByLabel('Nome da etapa').nth(2));
    await keys.type('Visita agendada');
    const third = editor.locator('.stage-row').nth(2);
    await tabTo(page, third.getByRole('button', { name: 'Mover para cima' }));
    await keys.press('Enter');
    await editor.getByText('Etapa Visita agendada na posição 2 de 3.').waitFor({ state: 'attached' });
    // Focus stays on the button of the stage moved.
    await assertFocused(editor.locator('.stage-row').nth(1).getByRole('button', { name: 'Mover para cima' }));
    await tabTo(page, editor.getByRole('button', { name: 'Salvar' }));
    await keys.press('Enter');
    await page.getByText('Pipeline salvo.').waitFor();

    const school = (await api('GET', '/pipelines')).body.find(
      (pipeline: { name: string }) => pipeline.name === 'Escola',
    );
    assert.deepEqual(school?.stages, [
      { key: 'interessado', label: 'Interessado', kind: 'open' },
      { key: 'visita_agendada', label: 'Visita agendada', kind: 'open' },
      { key: 'matricula', label: 'Matrícula', kind: 'won' },
    ]);
    assert.equal(school.default, false);
    await page.locator(`.pipelines > li[data-id="${school.id}"]`).waitFor();
    assert.deepEqual(troubles, []);
    await context.close();
  });

  it('reorders stages by drag; a stage removed that holds leads moves them where the person says', async () => {
    const { context, page, troubles } = await harness.openConsole();
    await harness.signIn(page);
    await page.getByRole('link', { name: 'Pipelines' }).click();
    await page.getByRole('button', { name: 'Editar Clínica' }).click();
    const editor = page.locator('.editor');
    await editor
      .locator('.stage-row[data-key="attended"] .handle')
      .dragTo(editor.locator('.stage-row[data-key="scheduled"]'));
    assert.deepEqual(
      await editor.locator('.stage-row').evaluateAll((rows) => rows.map((row) => (row as HTMLElement).dataset.key)),
      ['attended', 'scheduled', 'enrolled', 'gave_up'],
    );
    await editor.locator('.stage-row[data-key="gave_up"]').getByRole('button', { name: 'Remover etapa' }).click();
    await editor.getByRole('button', { name: 'Salvar' }).click();
    const question = editor.getByRole('group', { name: 'Para onde vão esses leads?' });
    await question.getByText('1 lead(s) estão nas etapas removidas.').waitFor();
    await question.getByLabel('Mover os leads para').selectOption({ label: 'Compareceu' });
    await question.getByRole('button', { name: 'Mover os leads e salvar' }).click();
    await page.getByText('Pipeline salvo.').waitFor();

    const saved = (await api('GET', `/pipelines/${clinic}`)).body;
    assert.deepEqual(
      saved.stages.map((stage: Stage) => stage.key),
      ['attended', 'scheduled', 'enrolled'],
    );
    assert.equal(await waitForStatus(leads.get('Edu') as string, 'attended'), 'attended');
    assert.deepEqual(troubles, [
      'console: Failed to load resource: the server responded with a status of 409 (Conflict)',
    ]);
    await context.close();
  });

  it('deletes a pipeline that holds leads, moving them to a stage of another', async () => {
    const made = await api('POST', '/pipelines', {
      name: 'Eventos',
      stages: [{ key: 'rsvp', label: 'RSVP', kind: 'open' }],
    });
    await lead('Gil', made.body.id, 'rsvp');
    const { context, page, troubles } = await harness.openConsole();
    await harness.signIn(page);
    await page.getByRole('link', { name: 'Pipelines' }).click();
    await page.getByRole('button', { name: 'Editar Eventos' }).click();
    await page.getByRole('button', { name: 'Excluir pipeline' }).click();
    await page.getByRole('button', { name: 'Sim, excluir' }).click();
    const question = page.getByRole('group', { name: 'Para onde vão esses leads?' });
    await question.getByText('1 lead(s) estão neste pipeline.').waitFor();
    await question.getByLabel('Mover os leads para').selectOption(`${standard.id}:contacted`);
    await question.getByRole('button', { name: 'Mover os leads e excluir' }).click();
    await page.getByText('Pipeline excluído.').waitFor();
    assert.equal((await api('GET', `/pipelines/${made.body.id}`)).status, 404);
    await page.locator(`.pipelines > li[data-id="${made.body.id}"]`).waitFor({ state: 'detached' });
    assert.equal(await waitForStatus(leads.get('Gil') as string, 'contacted'), 'contacted');
    assert.equal((await api('GET', `/leads/${leads.get('Gil')}`)).body.pipeline, standard.id);
    assert.deepEqual(troubles, [
      'console: Failed to load resource: the server responded with a status of 409 (Conflict)',
    ]);
    await context.close();
  });

  /** The lead's status once it is `status` (a move may finish just after the answer), or its last after 10 s. */
  async function waitForStatus(id: string, status: string): Promise<string> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const current = (await api('GET', `/leads/${id}`)).body.status;
      if (current === status || Date.now() > deadline) return current;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
});
