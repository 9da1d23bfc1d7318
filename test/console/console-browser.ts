import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { type Browser, chromium, type Locator, type Page } from 'playwright-core';
import { adminAuth, PROCESS_ADMIN_TOKEN, tenantWithToken } from '../helpers/admin-api.js';
import { type ServerProcess, startServer } from '../helpers/server-process.js';
import { migratedDataDir } from '../helpers/test-database.js';

/** The console's tests drive Debian's Chromium; CI must have it, a developer may not. */
export const CHROMIUM = '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);
if (!hasChromium && process.env.CI) throw new Error(`CI must run the console test: install Debian's chromium`);

/**
 * A Funil server process on a fresh database, a tenant with a token, and a Chromium to drive the
 * console with: what each console test file starts once and stops at its end.
 */
export class ConsoleBrowser {
  server!: ServerProcess;
  browser!: Browser;
  token!: string;
  #dataDir = '';

  async start(tenant: string, scopes: readonly string[], env: Record<string, string> = {}): Promise<void> {
    this.#dataDir = await migratedDataDir('funil-console-');
    this.server = await startServer({
      FUNIL_DATA_DIR: this.#dataDir,
      FUNIL_BOOTSTRAP: 'false',
      FUNIL_ADMIN_TOKEN: PROCESS_ADMIN_TOKEN,
      ...env,
    });
    this.token = (await tenantWithToken(this.server, tenant, scopes)).token;
    this.browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
    });
  }

  async stop(): Promise<void> {
    await this.browser?.close();
    await this.server?.stop();
    if (this.#dataDir) await rm(this.#dataDir, { recursive: true, force: true });
  }

  /** A call of the public API with the tenant's token (or `token`). */
  async api(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    const answer = await fetch(`${this.server.url}/api/external/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${this.token}`, 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    // biome-ignore lint/suspicious/noExplicitAny: a test reads whatever JSON came back.
    return { status: answer.status, body: (await answer.json()) as any, etag: answer.headers.get('etag') };
  }

  /** A new token of the tenant with `scopes`, made through the admin API. */
  async issueToken(scopes: readonly string[]): Promise<string> {
    const { tenant } = (await this.api('GET', '/token')).body;
    const issued = await fetch(`${this.server.url}/api/admin/v1/tenants/${tenant}/tokens`, {
      method: 'POST',
      headers: adminAuth,
      body: JSON.stringify({ name: scopes.join(' '), scopes }),
    });
    assert.equal(issued.status, 201);
    return ((await issued.json()) as { token: string }).token;
  }

  /**
   * A page of a fresh context that records, on every document it loads, what must never happen:
   * dialogs, console errors, uncaught errors, Content-Security-Policy violations, foreign requests.
   */
  async openConsole(options: Parameters<Browser['newContext']>[0] = {}) {
    const context = await this.browser.newContext({ locale: 'pt-BR', ...options });
    const page = await context.newPage();
    const troubles: string[] = [];
    page.on('dialog', (dialog) => {
      troubles.push(`dialog: ${dialog.message()}`);
      void dialog.dismiss();
    });
    page.on('pageerror', (error) => troubles.push(`error: ${error.message}`));
    page.on('request', (request) => {
      if (!request.url().startsWith(this.server.url)) troubles.push(`foreign: ${request.url()}`);
    });
    page.on('console', (message) => {
      if (message.type() === 'error') troubles.push(`console: ${message.text()}`);
    });
    // The event names the directive and the file that broke it, which the console's line does not.
    await page.exposeFunction('reportViolation', (violation: string) => troubles.push(`csp: ${violation}`));
    await page.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (event) => {
        const report = (window as unknown as { reportViolation(violation: string): void }).reportViolation;
        report(
          `${event.violatedDirective} at ${event.sourceFile}:${event.lineNumber} on ${document.location.pathname}`,
        );
      });
    });
    await page.goto(`${this.server.url}/console`);
    return { context, page, troubles };
  }

  async signIn(page: Page, withToken = this.token, english = false): Promise<void> {
    await page.getByLabel(english ? 'Access token (fnl_…)' : 'Token de acesso (fnl_…)').fill(withToken);
    await page.getByRole('button', { name: english ? 'Sign in' : 'Entrar' }).click();
    await page.getByRole('navigation').waitFor();
  }
}

/**
 * axe-core finds no violation on the page as it is now, and the page is no wider than `width`.
 * axe is injected as a script of its own: open the page with `bypassCSP`, as the page's policy
 * would rightly refuse it.
 */
export async function assertAccessible(page: Page, name: string, width: number): Promise<void> {
  await page.addScriptTag({ path: createRequire(import.meta.url).resolve('axe-core/axe.min.js') });
  const result = (await page.evaluate(() => (window as unknown as { axe: { run(): Promise<unknown> } }).axe.run())) as {
    violations: { id: string; help: string; nodes: unknown[] }[];
  };
  const serious = result.violations.map((violation) => `${violation.id}: ${violation.help}`);
  assert.deepEqual(serious, [], `${name}: ${serious.join('; ')}`);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(overflow <= width, `${name} is ${overflow} px wide at ${width}`);
}

/** Presses Tab until `target` has the focus: it fails when the keyboard cannot reach it. */
export async function tabTo(page: Page, target: Locator, most = 60): Promise<void> {
  for (let presses = 0; presses < most; presses++) {
    if (await target.evaluate((element) => element === document.activeElement).catch(() => false)) return;
    await page.keyboard.press('Tab');
  }
  throw new Error(`${target} is not reached by ${most} presses of Tab`);
}

/** `target` has the focus, now or within 5 s (focus moves after the page renders). */
export async function assertFocused(target: Locator): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!(await target.evaluate((element) => element === document.activeElement).catch(() => false))) {
    assert.ok(Date.now() < deadline, `${target} has the focus`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
