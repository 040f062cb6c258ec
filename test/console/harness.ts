/**
 * The browser tests' sandbox: `amsg serve` (the built CLI, as the e2e suite runs it) over a
 * fresh, seeded database on an ephemeral 127.0.0.1 port, its one-time console sign-in link,
 * and Debian's Chromium driven by puppeteer-core (no browser is downloaded). Where no
 * Chromium is installed, `CHROMIUM` is undefined and the suites skip, saying so.
 */
import { execa, type ResultPromise } from 'execa';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { BIN } from '../e2e/harness.js';

export const CHROMIUM = [process.env.AMSG_CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find(
  (p): p is string => !!p && existsSync(p),
);
if (!CHROMIUM) console.warn('console browser tests skipped: no Chromium found (apt-get install chromium, or set AMSG_CHROMIUM)');

export const CONSOLE_DIST = fileURLToPath(new URL('../../dist/console/', import.meta.url));
export const AXE_PATH = fileURLToPath(new URL('../../node_modules/axe-core/axe.min.js', import.meta.url));

export interface Key {
  public_key: string;
  private_key: string;
}

export class ConsoleSandbox {
  readonly dir = mkdtempSync(join(tmpdir(), 'amsg-console-'));
  readonly db = join(this.dir, 'amsg.db');
  url = '';
  signInLink = '';
  key!: Key;
  private server?: ResultPromise;

  /** `serveArgs`: more flags for `amsg serve` (`--smtp URL` for the mail page's tests). */
  constructor(readonly serveArgs: string[] = []) {}

  private env(extra: Record<string, string> = {}) {
    return {
      ...process.env,
      AMSG_DB: this.db,
      XDG_CONFIG_HOME: join(this.dir, 'config'),
      AMSG_BASE_URL: '',
      AMSG_API_KEY: '',
      AMSG_NOW: '',
      AMSG_OUTPUT: '',
      TZ: 'UTC',
      ...extra,
    };
  }

  /** init --hq, seed the fixtures, then serve; resolves once the console's sign-in line is printed. */
  async start(fixtures: string[]): Promise<void> {
    const init = await execa('node', [BIN, 'init', '--hq', '--json'], { env: this.env(), reject: false });
    if (init.exitCode !== 0) throw new Error(`init failed: ${init.stderr}`);
    this.key = JSON.parse(init.stdout);
    if (fixtures.length) {
      const seed = await execa('node', [BIN, 'seed', ...fixtures, '--json'], { env: this.env(), reject: false });
      if (seed.exitCode !== 0) throw new Error(`seed failed: ${seed.stderr}`);
    }
    await this.serve();
  }

  /** (Re)starts `amsg serve` over the database: a new sign-in link each time. */
  async serve(): Promise<void> {
    this.server = execa('node', [BIN, 'serve', '--host', '127.0.0.1', '--port', '0', '--db', this.db, ...this.serveArgs], {
      env: this.env(),
      reject: false,
    });
    const server = this.server;
    let out = '';
    let err = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`serve did not print its URL and sign-in link: ${out} ${err}`)), 20_000);
      const check = () => {
        const url = /^(http:\/\/\S+)\n/.exec(out)?.[1];
        const link = /^console: (\S+)$/m.exec(err)?.[1];
        if (url && link) {
          clearTimeout(timer);
          this.url = url;
          this.signInLink = link;
          resolve();
        }
      };
      server.stdout!.on('data', (c: Buffer) => ((out += c.toString()), check()));
      server.stderr!.on('data', (c: Buffer) => ((err += c.toString()), check()));
      server.once('exit', () => reject(new Error(`serve exited: ${err}`)));
    });
  }

  /** One API call with a key pair (the owner's by default): status and parsed body. */
  async call(method: string, path: string, body?: unknown, key: Key = this.key): Promise<{ status: number; body: any }> {
    const res = await fetch(`${this.url}${path}`, {
      method,
      headers: { authorization: `Basic ${Buffer.from(`${key.public_key}:${key.private_key}`).toString('base64')}` },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  }

  async ok(method: string, path: string, body?: unknown, key?: Key): Promise<any> {
    const r = await this.call(method, path, body, key);
    if (r.status !== 200) throw new Error(`${method} ${path} answered ${r.status}: ${JSON.stringify(r.body)}`);
    return r.body;
  }

  async stopServer() {
    if (this.server) {
      this.server.kill('SIGTERM');
      await this.server;
      this.server = undefined;
    }
  }

  async stop() {
    await this.stopServer();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Chromium headless with a profile of its own, nothing reaching out to the network. */
export async function launchBrowser(dir: string): Promise<Browser> {
  return puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      `--user-data-dir=${mkdtempSync(join(dir, 'chromium-'))}`,
    ],
  });
}

/** A page of its own (own cookies), with page errors and dialogs collected. */
export async function newPage(browser: Browser) {
  const context = await browser.createBrowserContext();
  const page = await context.newPage();
  await page.setViewport({ width: 1280, height: 800 });
  const problems = { errors: [] as string[], dialogs: [] as string[] };
  page.on('pageerror', (e) => problems.errors.push(String((e as Error).message ?? e)));
  page.on('dialog', async (d) => {
    problems.dialogs.push(d.message());
    await d.dismiss();
  });
  return { page, problems, close: () => context.close() };
}

/** Goes to a console path and waits for its page's data to show (the data-loaded marker). */
export async function open(page: Page, base: string, path: string) {
  await page.goto(base + path);
  await page.waitForSelector('[data-loaded="true"]', { timeout: 20_000 }).catch(async (err) => {
    const main = await page.$eval('main', (m) => m.textContent).catch(() => '(no main)');
    throw new Error(`${path} did not show its data (${err.message}); the page says: ${main?.slice(0, 300)}`);
  });
}

/** The text of the first element matching, or ''. */
export async function textOf(page: Page, selector: string): Promise<string> {
  return page.$eval(selector, (e) => (e as HTMLElement).textContent).catch(() => '');
}

/** axe-core's serious and critical violations on the page as it stands. */
export async function axeViolations(page: Page): Promise<{ id: string; impact: string; nodes: string[] }[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.addScriptTag({ path: AXE_PATH });
  const violations = await page.evaluate(async () => {
    const result = await (window as any).axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v: any) => ({
      id: v.id,
      impact: v.impact,
      nodes: v.nodes.map((n: any) => n.target.join(' ')).slice(0, 5),
    }));
  });
  return violations.filter((v: { impact: string }) => v.impact === 'serious' || v.impact === 'critical');
}
