import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type Browser, chromium } from 'playwright-core';
import { type ServerProcess, startServer } from '../helpers/server-process.js';
import { migratedDataDir } from '../helpers/test-database.js';

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = new URL('../../test-artifacts/', import.meta.url).pathname;
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium && process.env.CI) throw new Error(`CI must run the docs page test: install Debian's chromium`);

describe('the /docs page, as a person sees it', { skip: hasChromium ? false : `${CHROMIUM} is not installed` }, () => {
  let dataDir: string;
  let server: ServerProcess;
  let browser: Browser;

  before(async () => {
    dataDir = await migratedDataDir('funil-docs-');
    server = await startServer({ FUNIL_DATA_DIR: dataDir, FUNIL_BOOTSTRAP: 'false' });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('shows the lead and customer operations, with every asset served by Funil itself', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 1800 } });
    const foreign: string[] = [];
    const failed: string[] = [];
    page.on('request', (request) => {
      if (!request.url().startsWith(server.url) && !request.url().startsWith('data:')) foreign.push(request.url());
    });
    page.on('requestfailed', (request) => failed.push(request.url()));
    await page.goto(`${server.url}/docs`, { waitUntil: 'networkidle' });
    await page.locator('.opblock').first().waitFor({ timeout: 15_000 });

    const text = (await page.locator('body').textContent()) ?? '';
    assert.match(text, /Funil external API/);
    for (const path of [
      '/leads',
      '/leads/{id}',
      '/leads/{id}/status',
      '/customers',
      '/customers/{id}',
      '/customers/{id}/status',
    ]) {
      assert.ok(await page.locator(`.opblock-summary-path[data-path="${path}"]`).count(), `operation ${path} shown`);
    }
    assert.ok(text.includes('List leads') && text.includes('Create a customer'));
    assert.deepEqual(foreign, [], 'nothing is loaded from the internet');
    assert.deepEqual(failed, []);

    await mkdir(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'docs.png'), fullPage: false });
  });
});
