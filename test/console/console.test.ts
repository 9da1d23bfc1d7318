import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { adminAuth } from '../helpers/admin-api.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';
import { assertAccessible, CHROMIUM, ConsoleBrowser, hasChromium } from './console-browser.js';

/** The README shows these two, as the test run took them. */
const SCREENSHOTS = new URL('../../docs/', import.meta.url).pathname;
const ARTIFACTS = new URL('../../test-artifacts/', import.meta.url).pathname;
const ALL_SCOPES = [
  'leads:read',
  'leads:write',
  'customers:read',
  'customers:write',
  'webhooks:read',
  'webhooks:write',
];
const XSS = '<img src=x onerror=alert(1)>';

describe('the /console, as a person sees it (SPEC §18)', {
  skip: hasChromium ? false : `${CHROMIUM} is not installed`,
}, () => {
  const harness = new ConsoleBrowser();
  const leads = new Map<string, string>();
  const receiver = new WebhookReceiver();
  const api = harness.api.bind(harness);
  const openConsole = harness.openConsole.bind(harness);
  const signIn = harness.signIn.bind(harness);
  let server: ConsoleBrowser['server'];
  let token: string;

  before(async () => {
    await receiver.start();
    await harness.start('Console', ALL_SCOPES, {
      FUNIL_WEBHOOKS_DELIVER: 'true',
      FUNIL_WEBHOOKS_ALLOW_HTTP: 'true',
      FUNIL_WEBHOOKS_ALLOW_PRIVATE: 'true',
      FUNIL_WEBHOOKS_RETRY_DELAYS: '1',
    });
    ({ server, token } = harness);
    const seeds: [string, string, string][] = [
      ['Ana', 'new', 'site'],
      ['Bruno', 'new', 'site'],
      ['Carla', 'contacted', 'ads'],
      ['Diego', 'qualified', 'ads'],
      ['Elisa', 'won', 'site'],
      ['Fábio', 'lost', 'event'],
      [XSS, 'new', 'site'],
    ];
    for (const [name, status, source] of seeds) {
      const created = await api('POST', '/leads', { name, phone: '1', status, source });
      assert.equal(created.status, 201);
      leads.set(name, created.body._id);
    }
  });
  after(async () => {
    await harness.stop();
    await receiver.close();
  });

  it('serves every asset itself, under a strict Content-Security-Policy', async () => {
    const answer = await fetch(`${server.url}/console`);
    const policy = answer.headers.get('content-security-policy') ?? '';
    assert.match(policy, /script-src 'self'/);
    assert.doesNotMatch(policy, /unsafe-inline|unsafe-eval/);
    assert.equal((await fetch(`${server.url}/console/vendor/preact.js`)).status, 200);
    assert.equal((await fetch(`${server.url}/console/vendor/nope.js`)).status, 404);
    // Raw paths, as a client that does not normalise them sends them.
    for (const path of ['/console/%2e%2e/package.json', '/console/..%2fpackage.json', '/console/%2e%2e%2fsrc/app.ts']) {
      assert.equal(await rawStatus(server.url, path), 404, path);
    }
  });

  it('signs in with a token kept in sessionStorage only; the funnel shows the API numbers; sign-out forgets it', async () => {
    const { context, page, troubles } = await openConsole();
    await signIn(page);
    assert.equal(await page.evaluate(() => localStorage.length), 0);
    assert.equal(await page.evaluate(() => sessionStorage.getItem('funil.token')), token);
    await page.locator('[data-testid="total"]').waitFor();
    const summary = await api('GET', '/leads/summary');
    assert.equal(await page.locator('[data-testid="total"]').textContent(), String(summary.body.total));
    for (const { status, count } of summary.body.byStatus) {
      const cell = page.locator(`tr[data-status="${status}"] td.count`);
      assert.equal(await cell.textContent(), String(count), status);
    }
    // Reached: at the stage or beyond, lost ones apart.
    const lost = summary.body.byStatus.find((entry: { status: string }) => entry.status === 'lost').count;
    const reachedNew = page.locator('tr[data-status="new"] td').nth(1);
    assert.equal(await reachedNew.textContent(), String(summary.body.total - lost));
    await mkdir(SCREENSHOTS, { recursive: true });
    await page.setViewportSize({ width: 1100, height: 900 });
    await page.screenshot({ path: join(SCREENSHOTS, 'console-funnel.png') });

    await page.getByRole('button', { name: 'Sair' }).click();
    await page.getByLabel('Token de acesso (fnl_…)').waitFor();
    assert.equal(await page.evaluate(() => sessionStorage.getItem('funil.token')), null);
    assert.deepEqual(troubles, []);
    await context.close();
  });

  it('a drag moves a lead to another stage; a lead changed elsewhere is reloaded, not moved', async () => {
    const { context, page, troubles } = await openConsole();
    await signIn(page);
    await page.getByRole('link', { name: 'Quadro' }).click();
    const bruno = page.locator(`.card[data-id="${leads.get('Bruno')}"]`);
    await bruno.waitFor();
    // Grabbed by its name, as a person would: the card's middle holds its "Move to" controls.
    await bruno.dragTo(page.locator('.column[data-status="proposal"]'), { sourcePosition: { x: 12, y: 10 } });
    await page.getByText('Movido.').waitFor();
    assert.equal((await api('GET', `/leads/${leads.get('Bruno')}`)).body.status, 'proposal');
    await page.locator(`.column[data-status="proposal"] .card[data-id="${leads.get('Bruno')}"]`).waitFor();

    // Ana changes elsewhere after the board read her; moving her then is refused and she is reloaded.
    await api('PUT', `/leads/${leads.get('Ana')}`, { score: 90 });
    const ana = page.locator(`.card[data-id="${leads.get('Ana')}"]`);
    await ana.getByLabel('Mover para').selectOption('won');
    await ana.getByRole('button', { name: 'Mover' }).click();
    await page.getByText('Este lead foi alterado em outro lugar; recarregado.').waitFor();
    assert.equal((await api('GET', `/leads/${leads.get('Ana')}`)).body.status, 'new');
    assert.match((await ana.textContent()) ?? '', /90/);

    // Carla changes between the board's re-read and its move: the If-Match answers 412, she is reloaded.
    const carla = leads.get('Carla') as string;
    await page.route(`**/api/external/v1/leads/${carla}`, async (route) => {
      const response = await route.fetch();
      await api('PUT', `/leads/${carla}`, { score: 70 });
      await route.fulfill({ response });
    });
    let refused = 0;
    page.on('response', (response) => {
      if (response.url().endsWith(`/leads/${carla}/status`) && response.status() === 412) refused += 1;
    });
    const card = page.locator(`.card[data-id="${carla}"]`);
    await card.getByLabel('Mover para').selectOption('won');
    await card.getByRole('button', { name: 'Mover' }).click();
    await page.waitForFunction(
      (id) => document.querySelector(`.card[data-id="${id}"]`)?.textContent?.includes('70'),
      carla,
    );
    await page.unroute(`**/api/external/v1/leads/${carla}`);
    assert.equal(refused, 1);
    assert.equal((await api('GET', `/leads/${carla}`)).body.status, 'contacted');

    // Text from records is text: the name shows as written, and nothing runs.
    const xss = page.locator(`.card[data-id="${leads.get(XSS)}"] .name`);
    assert.equal(await xss.textContent(), XSS);
    assert.equal(await page.locator('img[src="x"]').count(), 0);
    await page.screenshot({ path: join(SCREENSHOTS, 'console-board.png') });
    // The one error is the browser's own line for the refused move, which the board answered.
    assert.deepEqual(troubles, [
      'console: Failed to load resource: the server responded with a status of 412 (Precondition Failed)',
    ]);
    await context.close();
  });

  it('shows a record with its history; a token shows only the pages its scopes allow', async () => {
    const { context, page, troubles } = await openConsole({ locale: 'en-US' });
    // A token of the same tenant that may only read leads.
    const { tenant } = (await api('GET', '/token')).body;
    const issued = await fetch(`${server.url}/api/admin/v1/tenants/${tenant}/tokens`, {
      method: 'POST',
      headers: adminAuth,
      body: JSON.stringify({ name: 'leads only', scopes: ['leads:read'] }),
    });
    const readOnly = ((await issued.json()) as { token: string }).token;
    await signIn(page, token, true);
    await page.getByRole('link', { name: 'Leads' }).click();
    await page.getByRole('button', { name: /Carla/ }).click();
    await page.getByRole('heading', { name: 'Details: Carla' }).waitFor();
    await page.getByText('lead.created').waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();

    await signIn(page, readOnly, true);
    assert.equal(await page.getByRole('link', { name: 'Customers' }).count(), 0);
    assert.equal(await page.getByRole('link', { name: 'Funnel' }).count(), 1);
    await page.getByRole('link', { name: 'Board' }).click();
    await page.locator('.card').first().waitFor();
    assert.equal(await page.getByRole('button', { name: 'Move' }).count(), 0, 'no moving without leads:write');
    assert.equal(await page.locator('.card[draggable="true"]').count(), 0);
    assert.deepEqual(troubles, []);
    await context.close();
  });

  it('lists webhooks and their deliveries; a failed one is retried by hand', async () => {
    receiver.respond('/console-hook', 500, 500);
    const hook = await api('POST', '/webhooks', { url: receiver.url('/console-hook'), events: ['lead.created'] });
    assert.equal(hook.status, 201, JSON.stringify(hook.body));
    await api('POST', '/leads', { name: 'Hooked', phone: '1' });
    const failed = await waitFor(async () => {
      const { body } = await api('GET', `/webhooks/${hook.body.id}/deliveries?status=failed`);
      return body[0];
    });
    const { context, page, troubles } = await openConsole();
    await signIn(page);
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('button', { name: new RegExp(receiver.url('/console-hook')) }).click();
    const row = page.locator(`tr[data-id="${failed.id}"]`);
    await row.waitFor();
    assert.match((await row.textContent()) ?? '', /failed.*2.*500/);
    await row.getByRole('button', { name: 'Tentar de novo' }).click();
    await page.getByText('Na fila: a tentativa sai em instantes.').waitFor();
    await waitFor(async () => {
      const { body } = await api('GET', `/webhooks/${hook.body.id}/deliveries?status=succeeded`);
      return body.find((delivery: { id: string }) => delivery.id === failed.id);
    });
    assert.deepEqual(troubles, []);
    await context.close();
  });

  it('is usable at 360 px and passes an automated accessibility check (axe-core)', async () => {
    const { context, page, troubles } = await openConsole({ viewport: { width: 360, height: 740 }, bypassCSP: true });
    const check = (name: string) => assertAccessible(page, name, 360);
    await check('sign-in');
    await signIn(page);
    await page.locator('[data-testid="total"]').waitFor();
    await check('funnel');
    await page.getByRole('link', { name: 'Quadro' }).click();
    await page.locator('.card').first().waitFor();
    await check('board');
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.locator('.records button').first().click();
    await page.locator('table.deliveries tbody tr').first().waitFor();
    await check('webhooks');
    await mkdir(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'console-board-360.png') });
    assert.deepEqual(troubles, []);
    await context.close();
  });

  it('shows every page, /docs included, with no console error and no Content-Security-Policy violation', async () => {
    assert.equal((await api('POST', '/customers', { name: 'Gil', email: 'gil@example.com' })).status, 201);
    const { context, page, troubles } = await openConsole();
    await signIn(page);
    await page.locator('[data-testid="total"]').waitFor();
    // Each page once its data has come and shown; the funnel's charts, last, once Chart.js has drawn them.
    const pages: [link: string, reads: string, shows: string][] = [
      ['Quadro', '/leads?status=', '.card'],
      ['Leads', '/leads?limit=', '.records li'],
      ['Clientes', '/customers?', '.records li'],
      ['Webhooks', '/webhooks', 'h1'],
      ['Funil', '/leads/summary', '[data-testid="total"]'],
    ];
    for (const [link, reads, shows] of pages) {
      const answered = page.waitForResponse((response) => response.url().includes(`/api/external/v1${reads}`));
      await page.getByRole('navigation').getByRole('link', { name: link, exact: true }).click();
      await answered;
      await page.locator(shows).first().waitFor();
    }
    await page.waitForFunction(() => {
      const { Chart } = window as unknown as { Chart: { getChart(canvas: HTMLCanvasElement): unknown } };
      const canvases = [...document.querySelectorAll('canvas')];
      return canvases.length === 2 && canvases.every((canvas) => Chart.getChart(canvas));
    });
    await page.getByRole('link', { name: 'Documentação da API' }).click();
    await page.locator('#swagger-ui .opblock').first().waitFor({ timeout: 15_000 });
    assert.deepEqual(troubles, []);
    await context.close();
  });

  it("/docs and /console link to each other, under Funil's name", async () => {
    const { context, page, troubles } = await openConsole();
    await page.getByRole('link', { name: 'Documentação da API' }).waitFor();
    assert.equal(await page.getByRole('link', { name: 'Documentação da API' }).getAttribute('href'), '/docs');
    await page.goto(`${server.url}/docs`);
    const home = page.locator('a[href="/console"]');
    await home.first().waitFor({ timeout: 15_000 });
    assert.equal((await page.locator('img[src*="funil"], .topbar img').count()) > 0, true);
    assert.deepEqual(troubles, []);
    await context.close();
  });
});

async function waitFor<T>(probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await probe();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error('not in time');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The status of a GET of `path` exactly as written (fetch would resolve its dot segments first). */
function rawStatus(base: string, path: string): Promise<number | undefined> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    request({ hostname, port, path, method: 'GET' }, (response) => {
      response.resume();
      resolve(response.statusCode);
    })
      .on('error', reject)
      .end();
  });
}
