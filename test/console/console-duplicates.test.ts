import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { assertAccessible, assertFocused, CHROMIUM, ConsoleBrowser, hasChromium, tabTo } from './console-browser.js';

const SCOPES = ['leads:read', 'leads:write', 'customers:read', 'customers:write'];
const XSS = '<img src=x onerror=alert(1)>';
/** The page shows this many groups before "load more". */
const PAGE = 20;
const REFUSED_412 = 'console: Failed to load resource: the server responded with a status of 412 (Precondition Failed)';
/** The outcome of merging one of Ana's pair into the other. */
const MERGED_ANA = '1 lead(s) mesclado(s) em Ana Souza';
const REFUSED_409 = 'console: Failed to load resource: the server responded with a status of 409 (Conflict)';

type Lead = Record<string, unknown> & { _id: string; name: string };

describe("the console's duplicates: groups, side by side, merge and undo (SPEC §18, §21)", {
  skip: hasChromium ? false : `${CHROMIUM} is not installed`,
}, () => {
  const harness = new ConsoleBrowser();
  const api = harness.api.bind(harness);

  const lead = async (body: Record<string, unknown>): Promise<Lead> => {
    const created = await api('POST', '/leads', body);
    assert.equal(created.status, 201, JSON.stringify(created.body));
    return created.body;
  };
  /**
   * Two leads of one person, the same e-mail in another case and with a +tag: Ana (the older, so
   * the one kept at first) with no notes, and Ana S. with notes, another source and score.
   */
  const anaPair = async (tag: string) => {
    const first = await lead({ name: 'Ana Souza', email: `ana.${tag}@example.com`, source: 'site', score: 10 });
    const second = await lead({
      name: 'Ana S.',
      email: `Ana.${tag}+Promo@Example.com`,
      source: 'ads',
      score: 40,
      notes: 'ligar à tarde',
    });
    return { first, second, key: `email:ana.${tag}@example.com` };
  };
  const read = async (id: string) => (await api('GET', `/leads/${id}`)).body;
  /** A record as an undo gives it back: all but updatedAt (and the ETag) as before the merge. */
  const stable = (record: Lead) => ({ ...record, updatedAt: null });

  before(async () => {
    await harness.start('Duplicates', SCOPES);
  });
  after(() => harness.stop());

  const openPage = async (page: Page) => {
    await page.getByRole('navigation').getByRole('link', { name: 'Duplicados' }).click();
    await page.locator('.groups > li').first().waitFor();
  };
  const group = (page: Page, key: string) => page.locator(`.groups > li[data-key="${key}"]`);
  const openGroup = async (page: Page, key: string) => {
    await group(page, key).locator('.open-group').click();
    await group(page, key).locator('table.side-by-side tbody tr').first().waitFor();
    return group(page, key);
  };
  /** A fresh pair of Ana's, and a console signed in on the Duplicates page with their group open. */
  const openPair = async (tag: string) => {
    const pair = await anaPair(tag);
    const opened = await harness.openConsole();
    await harness.signIn(opened.page);
    await openPage(opened.page);
    return { ...pair, ...opened, compared: await openGroup(opened.page, pair.key) };
  };
  const mergeButton = (page: Page) => page.getByRole('button', { name: /^Mesclar \d+ registro/ });

  it('lists the groups largest first (an e-mail in another case or with a +tag, a phone written two ways), with "load more"; customers by the switch', async () => {
    const triple = [
      await lead({ name: 'Caio', email: 'caio@example.com' }),
      await lead({ name: 'Caio R.', email: 'CAIO@example.com' }),
      await lead({ name: 'Caio Rocha', email: 'caio+news@example.com' }),
    ];
    const ana = await anaPair('list');
    const bruno = [
      await lead({ name: 'Bruno', phone: '(11) 91234-5678' }),
      await lead({ name: 'Bruno Lima', phone: '+55 11 91234-5678' }),
    ];
    // Enough more groups for a second page; their phones sort after every other key.
    const filler: string[] = [];
    for (let index = 0; index < PAGE; index++) {
      const phone = `(99) 98100-${String(1000 + index)}`;
      filler.push((await lead({ name: `Filler ${index}`, phone }))._id);
      filler.push((await lead({ name: `Filler ${index} bis`, phone: `+55${phone.replace(/\D/g, '')}` }))._id);
    }
    const gil = (await api('POST', '/customers', { name: 'Gil', email: 'gil@example.com', phone: '(21) 99876-5432' }))
      .body;
    const gilSouza = (
      await api('POST', '/customers', { name: 'Gil Souza', email: 'gilsouza@example.com', phone: '21998765432' })
    ).body;

    const { context, page, troubles } = await harness.openConsole();
    await harness.signIn(page);
    await openPage(page);
    const keys = () =>
      page.locator('.groups > li').evaluateAll((found) => found.map((item) => (item as HTMLElement).dataset.key));
    const first = await keys();
    assert.equal(first.length, PAGE);
    assert.equal(first[0], 'email:caio@example.com', 'the largest first');
    assert.match((await group(page, first[0] as string).textContent()) ?? '', /3 registros/);
    assert.ok(first.includes(ana.key));
    assert.ok(first.includes('phone:+5511912345678'));
    assert.equal(await group(page, ana.key).locator('.name').textContent(), `ana.list@example.com`);
    await page.getByRole('button', { name: 'Carregar mais' }).click();
    await page.waitForFunction((count) => document.querySelectorAll('.groups > li').length > count, PAGE);
    const all = await keys();
    assert.equal(new Set(all).size, all.length, 'no group twice');
    assert.equal(all.length, PAGE + 3, 'the triple, Ana, Bruno and the filler');
    // The first group the second page brought takes the focus, as its button is gone.
    await assertFocused(group(page, all[PAGE] as string).locator('.open-group'));
    assert.equal(await page.getByRole('button', { name: 'Carregar mais' }).count(), 0);

    await page.getByRole('group', { name: 'Registros' }).getByLabel('Clientes').check();
    await page.locator('.groups > li[data-key="phone:+5521998765432"]').waitFor();
    assert.deepEqual(await keys(), ['phone:+5521998765432']);
    // A customer's name comes with its parts, from the record chosen.
    const customers = await openGroup(page, 'phone:+5521998765432');
    await customers.locator(`tr[data-field="name"] td[data-id="${gilSouza._id}"]`).getByRole('radio').check();
    await mergeButton(page).click();
    await page.locator('.outcome').getByText('1 cliente(s) mesclado(s) em Gil').waitFor();
    const kept = (await api('GET', `/customers/${gil._id}`)).body;
    assert.deepEqual([kept.name, kept.firstName, kept.lastName], ['Gil Souza', 'Gil', 'Souza']);
    assert.equal(kept.email, 'gil@example.com');
    assert.equal((await api('GET', `/customers/${gilSouza._id}`)).status, 404);
    await page.locator('.groups > li').first().waitFor({ state: 'detached' });
    await page.getByRole('group', { name: 'Registros' }).getByLabel('Leads').check();
    await page.getByLabel('Repetem').selectOption('phone');
    // The leads' list of every kind may still be on the page (it holds Bruno's phone too): wait for
    // the list the choice asked for, groups by phone only.
    await page.waitForFunction(() => {
      const shown = [...document.querySelectorAll<HTMLElement>('.groups > li')].map((item) => item.dataset.key);
      return shown.length > 0 && shown.every((key) => key?.startsWith('phone:'));
    });
    assert.ok((await keys()).includes('phone:+5511912345678'));
    for (const id of [...filler, ...triple.map((record) => record._id), ...bruno.map((record) => record._id)]) {
      await api('DELETE', `/leads/${id}`);
    }
    assert.deepEqual(troubles, []);
    await context.close();
  });

  it('shows a group side by side; a value chosen from the second record is kept by the merge, the other gone; Undo brings both back as they were', async () => {
    const { first, second, key, context, page, troubles, compared: opened } = await openPair('merge');
    const before = [await read(first._id), await read(second._id)];
    const columns = await opened
      .locator('thead th[data-id]')
      .evaluateAll((found) => found.map((cell) => (cell as HTMLElement).dataset.id));
    assert.deepEqual(columns, [first._id, second._id], 'a column per record, the oldest first');
    const cell = (field: string, id: string) => opened.locator(`tr[data-field="${field}"] td[data-id="${id}"]`);
    assert.equal(await cell('email', second._id).locator('.value').textContent(), before[1].email);
    assert.equal(await cell('notes', first._id).locator('.empty').textContent(), '—vazio');
    // Preselected as the server would: the kept record's value, else the other's.
    assert.ok(await page.getByRole('radio', { name: 'Manter este registro Ana Souza' }).isChecked());
    assert.ok(await cell('source', first._id).getByRole('radio').isChecked());
    assert.ok(await cell('notes', second._id).getByRole('radio').isChecked());

    await page.getByRole('radio', { name: 'Origem de Ana S.: ads' }).check();
    await page.getByRole('button', { name: 'Pré-visualizar' }).click();
    const preview = opened.locator('.preview');
    await preview.waitFor();
    assert.equal(await preview.locator('dd[data-field="source"]').textContent(), 'ads');
    assert.equal(await preview.locator('dd[data-field="notes"]').textContent(), 'ligar à tarde');
    assert.equal((await api('GET', `/leads/${second._id}`)).status, 200, 'a preview writes nothing');
    assert.equal((await read(first._id)).source, 'site');

    await mergeButton(page).click();
    const outcome = page.locator('.outcome');
    await outcome.getByText(MERGED_ANA).waitFor();
    await assertFocused(outcome);
    const merged = await read(first._id);
    assert.equal(merged.source, 'ads', 'the value chosen');
    assert.equal(merged.notes, 'ligar à tarde', "the other's, where the kept one had none");
    assert.equal(merged.email, before[0].email, "the kept one's own");
    assert.equal(merged.score, 10);
    assert.equal((await api('GET', `/leads/${second._id}`)).status, 404);
    await group(page, key).waitFor({ state: 'detached' });
    const recent = page.locator('.recent-merges li').first();
    assert.match((await recent.textContent()) ?? '', /1 lead\(s\) mesclado\(s\) em Ana Souza/);

    await outcome.getByRole('button', { name: 'Desfazer' }).click();
    await outcome.getByText('Mescla desfeita: 1 registro(s) de volta.').waitFor();
    await assertFocused(outcome);
    assert.deepEqual(stable(await read(first._id)), stable(before[0]));
    assert.deepEqual(stable(await read(second._id)), stable(before[1]));
    await group(page, key).waitFor();
    assert.equal(await recent.getAttribute('data-state'), 'undone');
    assert.equal(await recent.getByRole('button', { name: /Desfazer/ }).count(), 0);
    assert.deepEqual(troubles, []);
    await context.close();
  });

  it('a merge whose kept record changed since it was read is refused (If-Match: 412) and the records read again', async () => {
    const { first, second, context, page, troubles, compared: opened } = await openPair('stale');
    assert.equal((await api('PUT', `/leads/${first._id}`, { score: 77 })).status, 200);
    await mergeButton(page).click();
    await opened.getByText('Um destes registros mudou em outro lugar: recarregados.', { exact: false }).waitFor();
    await opened.locator(`tr[data-field="score"] td[data-id="${first._id}"]`).getByText('77').waitFor();
    assert.equal((await api('GET', `/leads/${second._id}`)).status, 200, 'not merged');
    // Read again, it merges.
    await mergeButton(page).click();
    await page.locator('.outcome').getByText(MERGED_ANA).waitFor();
    assert.equal((await api('GET', `/leads/${second._id}`)).status, 404);
    assert.equal((await read(first._id)).score, 77);
    assert.deepEqual(troubles, [REFUSED_412]);
    await context.close();
  });

  it('an Undo blocked by later changes lists them readably; "undo anyway" keeps them', async () => {
    const { first, second, context, page, troubles } = await openPair('blocked');
    await mergeButton(page).click();
    await page.locator('.outcome').getByText(MERGED_ANA).waitFor();
    // Since the merge: the notes it took from Ana S. changed on the lead kept.
    assert.equal((await api('PUT', `/leads/${first._id}`, { notes: 'ligou de volta' })).status, 200);

    await page
      .locator('.recent-merges')
      .getByRole('button', { name: `Desfazer — ${MERGED_ANA}` })
      .click();
    const outcome = page.locator('.outcome');
    await outcome.getByText('Desfazer esta mescla perderia alterações feitas depois dela:').waitFor();
    await assertFocused(outcome);
    assert.deepEqual(await outcome.locator('.blockers li').allTextContents(), [
      'Ana Souza: Observações mudou depois da mescla.',
    ]);
    assert.equal((await api('GET', `/leads/${second._id}`)).status, 404, 'nothing undone');
    await outcome.getByRole('button', { name: 'Desfazer mesmo assim (manter as alterações posteriores)' }).click();
    await outcome
      .getByText('Mescla desfeita: 1 registro(s) de volta; as alterações posteriores foram mantidas.')
      .waitFor();
    await assertFocused(outcome);
    assert.equal((await read(first._id)).notes, 'ligou de volta', 'the later value kept');
    const back = await read(second._id);
    assert.equal(back.notes, 'ligar à tarde');
    assert.equal(back.email, second.email);
    assert.deepEqual(troubles, [REFUSED_409]);
    await context.close();
  });

  it('works by keyboard alone: open, choose a value, merge, undo; the focus follows', async () => {
    const { first, second, key } = await anaPair('keys');
    const { context, page, troubles } = await harness.openConsole();
    await harness.signIn(page);
    const keys = page.keyboard;
    await tabTo(page, page.getByRole('link', { name: 'Duplicados' }));
    await keys.press('Enter');
    const opener = group(page, key).locator('.open-group');
    await opener.waitFor();
    await tabTo(page, opener, 120);
    await keys.press('Enter');
    await assertFocused(group(page, key).getByRole('heading', { name: 'Lado a lado: ana.keys@example.com' }));
    await tabTo(page, page.getByRole('radio', { name: 'Origem de Ana Souza: site' }));
    await keys.press('ArrowRight');
    assert.ok(await page.getByRole('radio', { name: 'Origem de Ana S.: ads' }).isChecked());
    await tabTo(page, mergeButton(page));
    await keys.press('Enter');
    const outcome = page.locator('.outcome');
    await outcome.getByText(MERGED_ANA).waitFor();
    await assertFocused(outcome);
    assert.equal((await read(first._id)).source, 'ads');
    await keys.press('Tab');
    await assertFocused(outcome.getByRole('button', { name: 'Desfazer' }));
    await keys.press('Enter');
    await outcome.getByText('Mescla desfeita: 1 registro(s) de volta.').waitFor();
    await assertFocused(outcome);
    assert.equal((await read(first._id)).source, 'site');
    assert.equal((await read(second._id)).source, 'ads');
    // Closing a comparison gives the focus back to its button.
    await tabTo(page, opener, 120);
    await keys.press('Enter');
    await tabTo(page, group(page, key).getByRole('button', { name: 'Fechar', exact: true }));
    await keys.press('Enter');
    await assertFocused(opener);
    assert.deepEqual(troubles, []);
    await context.close();
  });

  it('a token that may only read leads sees the groups and the records side by side, as text, without merging', async () => {
    const { first, key } = await anaPair('read');
    assert.equal((await api('PUT', `/leads/${first._id}`, { notes: XSS })).status, 200);
    const { context, page, troubles } = await harness.openConsole();
    await harness.signIn(page, await harness.issueToken(['leads:read']));
    await openPage(page);
    assert.equal(await page.getByRole('group', { name: 'Registros' }).count(), 0, 'no customers to switch to');
    const opened = await openGroup(page, key);
    assert.equal(await opened.locator(`tr[data-field="notes"] td[data-id="${first._id}"]`).textContent(), XSS);
    assert.equal(await page.locator('img[src="x"]').count(), 0);
    assert.equal(await opened.getByRole('radio').count(), 0);
    assert.equal(await opened.getByRole('checkbox').count(), 0);
    assert.equal(await page.getByRole('button', { name: 'Pré-visualizar' }).count(), 0);
    assert.equal(await mergeButton(page).count(), 0);
    assert.deepEqual(troubles, []);
    await context.close();
  });

  it('passes axe on the page, the side-by-side view and its preview; at 360 px the view shows that it scrolls', async () => {
    const { key } = await anaPair('axe');
    await lead({ name: 'Ana Souza 3', email: 'ana.axe+3@example.com' });
    const { context, page, troubles } = await harness.openConsole({
      viewport: { width: 360, height: 740 },
      bypassCSP: true,
    });
    await harness.signIn(page);
    await openPage(page);
    await assertAccessible(page, 'duplicates', 360);
    await openGroup(page, key);
    await page.locator('.compare .scroll-cue').waitFor();
    assert.ok(await page.locator('.compare .sideways.more-right').isVisible());
    await assertAccessible(page, 'side by side', 360);
    await page.getByRole('button', { name: 'Pré-visualizar' }).click();
    await page.locator('.preview').waitFor();
    await assertAccessible(page, 'preview', 360);

    // Wide enough for its three columns: no cue.
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.waitForFunction(() => !document.querySelector('.compare .scroll-cue'), undefined, { timeout: 5_000 });
    assert.equal(await page.locator('.compare .sideways.more-right').count(), 0);
    assert.deepEqual(troubles, []);
    await context.close();
  });
});
