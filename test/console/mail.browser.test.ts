/**
 * The console's mail: "Send a test" on a mailing's page and the mail log page, in Chromium,
 * against `amsg serve --smtp` pointed at a real SMTP server in-process (smtp-server, AUTH
 * after STARTTLS on a self-signed certificate: test/mail/smtp-server.ts). The test send
 * arrives there, and its row (then a refused one under "Failures only") shows on the mail
 * page; a subject holding markup shows as text; axe-core on the page in both themes.
 */
import { fileURLToPath } from 'node:url';
import type { Browser } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startSmtp, smtpError, type TestSmtp } from '../mail/smtp-server.js';
import { axeViolations, CHROMIUM, ConsoleSandbox, launchBrowser, newPage, open, textOf } from './harness.js';

const FIXTURE = fileURLToPath(new URL('./mail-fixture.yaml', import.meta.url));
const XSS = '<img src=x onerror=window.__xss=1>';

let smtp: TestSmtp;
let box: ConsoleSandbox;
let browser: Browser;
let owner: Awaited<ReturnType<typeof newPage>>;
let mailingId: number;

describe.skipIf(!CHROMIUM)('the console sends a test over SMTP and shows the mail log', () => {
  beforeAll(async () => {
    // refused@… is refused for good (550 to RCPT): a failed row for the filter.
    smtp = await startSmtp({ onRcpt: (a) => (a.startsWith('refused@') ? smtpError(550, '5.1.1 No such user here') : undefined) });
    box = new ConsoleSandbox(['--smtp', smtp.url, '--smtp-tls-insecure']);
    await box.start([FIXTURE]);
    mailingId = (await box.ok('GET', '/1/mailings?mailing_statuses=p')).find((m: any) => m.name === 'Spring').mailing_id;
    browser = await launchBrowser(box.dir);
    owner = await newPage(browser);
    // With the CSP off, only escaping stands between a subject's markup and the page.
    await owner.page.setBypassCSP(true);
    await owner.page.goto(box.signInLink);
    await owner.page.waitForSelector('[data-page="mailings"][data-loaded="true"]', { timeout: 20_000 });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await box?.stop();
    await smtp?.close();
  });

  test('"Send a test" names the addresses, carries the token, and the messages arrive personalized', async () => {
    const { page } = owner;
    await open(page, box.url, `/ui/1/mailings/${mailingId}`);
    const button = '[data-test-send] .confirm > button';
    expect(await page.$eval(button, (b) => (b as HTMLButtonElement).disabled)).toBe(true);
    await page.type('[data-test-to]', 'me@desk.example, qa@desk.example');
    await page.type('[data-test-as]', 'ada@example.com');
    await page.click(button);
    const dialog = await page.waitForSelector('dialog[open]');
    const text = (await dialog!.evaluate((d) => d.textContent)) ?? '';
    expect(text).toContain('me@desk.example, qa@desk.example');
    expect(text).toContain('ada@example.com');
    // The write goes out with the session's CSRF token (a write without it is a 403: console.browser.test.ts).
    const posted = page.waitForRequest((r) => r.url().endsWith(`/ui/api/1/mailings/${mailingId}/test`) && r.method() === 'POST');
    await page.click('dialog[open] button[type=submit]');
    const request = await posted;
    expect(request.headers()['x-csrf-token']).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(JSON.parse(request.postData() ?? '{}')).toEqual({
      recipient_emails: ['me@desk.example', 'qa@desk.example'],
      member_email: 'ada@example.com',
    });
    await page.waitForSelector('[data-test-send] [data-outcome="ok"]');
    expect(await textOf(page, '[data-test-send] [data-outcome="ok"]')).toBe('Queued 2 test messages for me@desk.example, qa@desk.example.');
    const got = await smtp.waitFor(2);
    expect(got.map((m) => m.envelopeTo[0]).sort()).toEqual(['me@desk.example', 'qa@desk.example']);
    for (const m of got) {
      expect(m.parsed.subject).toBe(`[Test] Spring for Ada ${XSS}`);
      expect(m.parsed.text).toContain('Hello Ada!');
    }
  });

  test('the mail page lists them newest first, the subject as text; "Failures only" shows the refused one', async () => {
    const { page } = owner;
    // A refused address: failed at once (550), with the server's reply.
    await box.ok('POST', `/1/mailings/${mailingId}/test`, { recipient_emails: ['refused@desk.example'] });
    for (let i = 0; i < 100; i++) {
      const log = await box.ok('GET', '/1/mail/log');
      if (log.length === 3 && log.every((r: any) => r.state === 'sent' || r.state === 'failed')) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    // Reached from the navigation.
    await open(page, box.url, '/ui/1/mailings');
    await page.click('header nav a[href="/ui/1/mail"]');
    await page.waitForSelector('[data-page="mail"][data-loaded="true"]');
    expect(await page.$eval('header nav a[href="/ui/1/mail"]', (a) => a.getAttribute('aria-current'))).toBe('page');
    const rows = await page.$$eval('[aria-label="Mail log"] tbody tr', (trs) =>
      trs.map((tr) => ({
        to: tr.querySelector('[data-mail-to]')?.textContent,
        subject: tr.querySelector('[data-mail-subject]')?.textContent,
        state: tr.querySelector('[data-mail-state]')?.textContent,
        reply: tr.querySelector('[data-mail-reply]')?.textContent,
        text: (tr as HTMLElement).textContent,
      })),
    );
    expect(rows.map((r) => [r.to, r.state])).toEqual([
      ['refused@desk.example', 'failed'],
      ['qa@desk.example', 'sent'],
      ['me@desk.example', 'sent'],
    ]);
    expect(rows[0].reply).toBe('550 5.1.1 No such user here');
    // No member named: each field's sample value (a text field's is its display name in brackets).
    expect(rows[0].subject).toMatch(/^\[Test\] Spring for \[[^\]]+\] <img src=x onerror=window\.__xss=1>$/);
    expect(rows[1].subject).toBe(`[Test] Spring for Ada ${XSS}`);
    expect(rows[1].reply).toMatch(/^250 /);
    expect(rows[1].text).toContain('test send');
    expect(await page.evaluate(() => (window as any).__xss)).toBeUndefined();
    expect(await page.$$eval('main img[src="x"]', (e) => e.length)).toBe(0);
    expect(owner.problems.dialogs).toEqual([]);
    // Failures only: in the URL, the refused message alone.
    await page.click('[data-failed-filter]');
    await page.waitForFunction(() => location.search === '?failed=1');
    await page.waitForFunction(() => document.querySelectorAll('[aria-label="Mail log"] tbody tr').length === 1);
    expect(await textOf(page, '[aria-label="Mail log"] [data-mail-to]')).toBe('refused@desk.example');
  });

  test('axe-core: no serious or critical violation on the mail page, light and dark', async () => {
    const { page } = owner;
    const found: Record<string, unknown> = {};
    for (const theme of ['light', 'dark']) {
      await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: theme }]);
      for (const path of ['/ui/1/mail', '/ui/1/mail?failed=1', `/ui/1/mailings/${mailingId}`]) {
        await open(page, box.url, path);
        const violations = await axeViolations(page);
        if (violations.length) found[`${theme} ${path}`] = violations;
      }
    }
    expect(found).toEqual({});
  }, 120_000);
});
