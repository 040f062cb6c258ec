/**
 * The web console in Chromium, against `amsg serve` over a seeded database (fixture.yaml):
 * sign-in by link and by key pair, each page showing the right records, personalization,
 * the HTML check, charts, live counts during a send, replay, XSS, CSRF, another account's
 * pages, and axe-core on every page in both themes. Also takes the README's screenshot
 * (docs/img/console.png with AMSG_UPDATE_SCREENSHOT=1; otherwise a temp file).
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createServer, type Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { axeViolations, CHROMIUM, ConsoleSandbox, type Key, launchBrowser, newPage, open, textOf } from './harness.js';

const FIXTURE = fileURLToPath(new URL('./fixture.yaml', import.meta.url));
/** The README's screenshot, rewritten only when asked (AMSG_UPDATE_SCREENSHOT=1), so a test run leaves the checkout clean. */
const SCREENSHOT = fileURLToPath(new URL('../../docs/img/console.png', import.meta.url));
const UPDATE_SCREENSHOT = process.env.AMSG_UPDATE_SCREENSHOT === '1';
const XSS_TEXT = '<img src=x onerror=window.__xss=1>';

const box = new ConsoleSandbox();
let browser: Browser;
/** The HQ owner's page, signed in by the link. */
let owner: Awaited<ReturnType<typeof newPage>>;
/** Keys of the sub-account's owner, and of a user (role `user`, no replay) of account 1. */
let branchKey: Key;
let viewerKey: Key;
/** A webhook receiver that answers 200, so some deliveries succeed. */
let receiver: Server;
let ids: { welcome: number; launch: number; ada: number; grace: number; mallory: number; sms: number };

async function signInWithKey(key: Key) {
  const session = await newPage(browser);
  await session.page.goto(`${box.url}/ui/login`);
  await session.page.type('input[name=public_key]', key.public_key);
  await session.page.type('input[name=private_key]', key.private_key);
  await Promise.all([session.page.waitForNavigation(), session.page.click('button[type=submit], input[type=submit]')]);
  return session;
}

const go = (page: Page, path: string) => open(page, box.url, path);

/** Confirms the open dialog; answers the outcome's text, or fails with the error the dialog shows. */
async function confirmDialog(page: Page): Promise<string> {
  await page.click('dialog[open] button[type=submit]');
  const done = await page.waitForSelector('[data-outcome="ok"], dialog[open] .error[role=alert]');
  const text = (await done!.evaluate((e) => e.textContent)) ?? '';
  if (await done!.evaluate((e) => e.closest('dialog') !== null)) throw new Error(`the write was refused: ${text}`);
  return text;
}

/** Gives a page of its own context the owner's session cookie (the sign-in link works once). */
async function useOwnerSession(page: Page) {
  await page.goto(`${box.url}/ui/login`);
  await page.setCookie(...(await owner.page.cookies(`${box.url}/ui/`)));
}

describe.skipIf(!CHROMIUM)('the web console in Chromium', () => {
  beforeAll(async () => {
    await box.start([FIXTURE]);
    const mailings = await box.ok('GET', '/1/mailings?mailing_statuses=p,c');
    const members = await box.ok('GET', '/1/members?start=0&end=3');
    ids = {
      welcome: mailings.find((m: any) => m.name === 'Welcome').mailing_id,
      launch: mailings.find((m: any) => m.name.endsWith('Launch')).mailing_id,
      ada: members.find((m: any) => m.email === 'ada@example.com').member_id,
      grace: members.find((m: any) => m.email === 'grace@example.com').member_id,
      mallory: members.find((m: any) => m.email === 'mallory@example.com').member_id,
      sms: (await box.ok('GET', '/1/sms/campaigns'))[0].sms_campaign_id,
    };
    const branchUser = await box.ok('POST', '/2/users', { email: 'branch@example.com', role: 'owner' });
    branchKey = await box.ok('POST', '/2/keys', { user_id: branchUser.user_id });
    const viewer = await box.ok('POST', '/1/users', { email: 'viewer@example.com', role: 'user' });
    viewerKey = await box.ok('POST', '/1/keys', { user_id: viewer.user_id });
    receiver = createServer((_req, res) => res.end('ok')).listen(0, '127.0.0.1');
    await new Promise((r) => receiver.once('listening', r));
    browser = await launchBrowser(box.dir);
    owner = await newPage(browser);
  }, 120_000);

  afterAll(async () => {
    receiver?.close();
    await browser?.close();
    await box.stop();
  });

  test('the one-time link signs in and lands on the mailings; used again, it is refused', async () => {
    const { page } = owner;
    await page.goto(box.signInLink);
    await page.waitForSelector('[data-page="mailings"][data-loaded="true"]', { timeout: 20_000 });
    expect(new URL(page.url()).pathname).toBe('/ui/1/mailings');
    const again = await newPage(browser);
    const res = await again.page.goto(box.signInLink);
    expect(res?.status()).toBe(401);
    expect(await again.page.content()).toContain('invalid, used or expired');
    await again.close();
  });

  test('without a session a page goes to sign-in and data calls answer 401', async () => {
    const anon = await newPage(browser);
    await anon.page.goto(`${box.url}/ui/1/members`);
    expect(new URL(anon.page.url()).pathname).toBe('/ui/login');
    const res = await anon.page.goto(`${box.url}/ui/api/1/members`);
    expect(res?.status()).toBe(401);
    await anon.close();
  });

  test('the key pair signs in to its own account; a wrong half is refused without saying which', async () => {
    const wrong = await signInWithKey({ public_key: branchKey.public_key, private_key: 'x'.repeat(32) });
    expect(await wrong.page.content()).toContain('That key pair is not valid.');
    expect(new URL(wrong.page.url()).pathname).toBe('/ui/login');
    await wrong.close();
    const branch = await signInWithKey(branchKey);
    await branch.page.waitForSelector('[data-page="mailings"][data-loaded="true"]');
    expect(new URL(branch.page.url()).pathname).toBe('/ui/2/mailings');
    await branch.close();
  });

  test('mailings: names, statuses, rates; the status filter is in the URL', async () => {
    const { page } = owner;
    await go(page, '/ui/1/mailings');
    const table = await textOf(page, 'table');
    expect(table).toContain('Welcome');
    expect(table).toContain(`${'<img src=x onerror=window.__xss=4>'} Launch`);
    // Welcome: 3 delivered, 2 opened, 1 clicked.
    const welcomeRow = await page.$$eval('tbody tr', (rows) =>
      rows.map((r) => (r as HTMLElement).textContent).find((t) => t.startsWith('Welcome')),
    );
    expect(welcomeRow).toContain('complete');
    expect(welcomeRow).toContain('66.7%');
    expect(welcomeRow).toContain('33.3%');
    await page.select('.filters select', 'p');
    await page.waitForFunction(() => location.search === '?status=p');
    await page.waitForFunction(() => !document.querySelector('tbody')?.textContent?.includes('Welcome'));
    expect(await textOf(page, 'tbody')).toContain('Launch');
  });

  test('a mailing: the message personalized for two different members, in a sandboxed frame', async () => {
    const { page } = owner;
    for (const [id, name] of [
      [ids.ada, 'Ada'],
      [ids.grace, 'Grace'],
    ] as const) {
      await go(page, `/ui/1/mailings/${ids.welcome}?member=${id}`);
      await page.waitForFunction((n) => document.querySelector('[data-subject]')?.textContent === `Hello ${n}`, {}, name);
      const frame = await page.waitForSelector('iframe.preview-frame');
      expect(await frame!.evaluate((f) => f.getAttribute('sandbox'))).toBe('allow-popups allow-popups-to-escape-sandbox');
      const content = await frame!.contentFrame();
      await content!.waitForFunction((n) => document.body?.textContent.includes(`Hello ${n}!`), {}, name);
      expect(await page.$eval('[data-preview-source]', (e) => e.getAttribute('data-preview-source'))).toBe('sent');
    }
    // Any member by address: the URL takes the member, the message follows.
    await go(page, `/ui/1/mailings/${ids.welcome}`);
    expect(await textOf(page, '[data-subject]')).toBe('Hello [First Name]');
    await page.type('.inline-form input[type=email]', 'grace@example.com');
    await page.click('.inline-form button[type=submit]');
    await page.waitForFunction((id) => location.search === `?member=${id}`, {}, ids.grace);
    await page.waitForFunction(() => document.querySelector('[data-subject]')?.textContent === 'Hello Grace');
    // The member's message page shows what was sent to that member.
    await go(page, `/ui/1/mailings/${ids.welcome}/messages/${ids.grace}`);
    expect(await textOf(page, '[data-subject]')).toBe('Hello Grace');
    expect(await textOf(page, 'h1')).toBe('Message to grace@example.com');
  });

  test('the HTML check names a feature e-mail clients lack, and the clients', async () => {
    const { page } = owner;
    await go(page, `/ui/1/mailings/${ids.welcome}`);
    await page.waitForSelector('[data-check-features]');
    const features = await page.$$eval('[data-feature]', (els) => els.map((e) => e.getAttribute('data-feature')));
    expect(features).toContain('css-position');
    const text = await textOf(page, '[data-feature="css-position"]');
    expect(text).toMatch(/Fails in .*Gmail/);
    const score = Number(await page.$eval('[data-score]', (e) => e.getAttribute('data-score')));
    expect(score).toBeGreaterThan(0);
    expect(score).toBeLessThan(100);
  });

  test('charts are drawn from the report: canvases with data', async () => {
    const { page } = owner;
    await go(page, `/ui/1/mailings/${ids.welcome}`);
    await page.waitForSelector('[data-chart="timeline"] canvas');
    for (const chart of ['timeline', 'outcomes', 'link-clicks']) {
      const points = await page.$eval(`[data-chart="${chart}"]`, (e) => Number(e.getAttribute('data-points')));
      expect(points).toBeGreaterThan(0);
      expect(await page.$(`[data-chart="${chart}"] canvas`)).not.toBeNull();
    }
    // The outcome chart's numbers: 3 delivered, 0 bounced, 0 opted out.
    const rows = await page.$$eval('[data-chart="outcomes"] details tbody tr', (trs) => trs.map((t) => (t as HTMLElement).textContent));
    expect(rows).toEqual(['Delivered3', 'Bounced0', 'Opted out0']);
    // Something is painted on the timeline canvas (not a blank bitmap).
    const painted = await page.$eval('[data-chart="timeline"] canvas', (c) => {
      const canvas = c as HTMLCanvasElement;
      const data = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data;
      let opaque = 0;
      for (let i = 3; i < data.length; i += 4) if (data[i] > 0) opaque++;
      return opaque;
    });
    expect(painted).toBeGreaterThan(100);
  });

  test('the screenshot for the README: a mailing page with its charts, 1280x800', async () => {
    const { page } = owner;
    await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'light' }]);
    await go(page, `/ui/1/mailings/${ids.welcome}?member=${ids.ada}`);
    await page.waitForSelector('[data-chart="timeline"] canvas');
    await page.waitForSelector('[data-check-features]');
    const frame = await (await page.waitForSelector('iframe.preview-frame'))!.contentFrame();
    await frame!.waitForFunction(() => document.body?.textContent.includes('Hello Ada!'));
    // Otherwise into the sandbox's temp folder: taken and checked the same way, the checkout untouched.
    const path = UPDATE_SCREENSHOT ? SCREENSHOT : join(box.dir, 'console.png');
    mkdirSync(dirname(path), { recursive: true });
    await page.screenshot({ path, clip: { x: 0, y: 0, width: 1280, height: 800 } });
    // A PNG (its signature), 1280 × 800 (the IHDR chunk's width and height).
    const png = readFileSync(path);
    expect(png.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
    expect(png.subarray(12, 16).toString('ascii')).toBe('IHDR');
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([1280, 800]);
  });

  test('live counts move during a send, without a reload', async () => {
    const { page } = owner;
    const crowd = (await box.ok('GET', '/1/groups')).find((g: any) => g.group_name === 'Crowd').member_group_id;
    // A draft awaiting approval (status u, no send_at): nothing sends until the test approves
    // it, once the page shows it and its event stream is connected, however slow the machine.
    const { mailing_id: mailingId } = await box.ok('POST', '/1/mailings', {
      name: 'Crowd send',
      subject: 'Hi [% member:first_name %]',
      sender: 'shop@example.com',
      html_body: '<p>Hi</p><p><a href="[% optout_url %]">Opt out</a></p>',
      recipient_groups: [crowd],
      status: 'u',
    });
    await go(page, `/ui/1/mailings/${mailingId}`);
    // The stream's first counts event marks the page live: connected.
    await page.waitForSelector('[data-live="true"]');
    await page.evaluate(() => {
      (window as any).__sameDocument = true;
      (window as any).__sentSeen = [];
      const sent = document.querySelector('[data-count="sent"] .stat')!;
      new MutationObserver(() => (window as any).__sentSeen.push(sent.textContent)).observe(sent, {
        childList: true,
        characterData: true,
        subtree: true,
      });
    });
    expect(await textOf(page, '[data-count="sent"] .stat')).toBe('0');
    expect(await textOf(page, '.facts .badge')).toBe('unapproved');
    // Approved through the API (as another user or the CLI would): it sends at once.
    await box.ok('PUT', `/1/mailings/${mailingId}`, { status: 'ready' });
    await page.waitForFunction(() => document.querySelector('[data-count="sent"] .stat')?.textContent === '20,000', { timeout: 60_000 });
    await page.waitForFunction(() => document.querySelector('.facts .badge')?.textContent === 'complete', { timeout: 30_000 });
    expect(await page.evaluate(() => (window as any).__sameDocument)).toBe(true);
    const seen: string[] = await page.evaluate(() => (window as any).__sentSeen);
    expect(seen.at(-1)).toBe('20,000');
    expect(await page.$('[data-live="true"]')).toBeNull();
  }, 120_000);

  test('a split test shows each variant with its subject and response, and a chart of opens per variant', async () => {
    const { page } = owner;
    const readers = (await box.ok('GET', '/1/groups')).find((g: any) => g.group_name === 'Readers').member_group_id;
    const { mailing_id: id } = await box.ok('POST', '/1/mailings', {
      name: 'Subject test',
      subject: 'Subject test',
      sender: 'shop@example.com',
      html_body: '<p>Hi</p><p><a href="[% optout_url %]">Opt out</a></p>',
      mailing_type: 's',
      recipient_groups: [readers],
      split_test: { variants: [{ subject: 'Variant A' }, { subject: 'Variant B' }], test_percent: 100 },
    });
    for (let i = 0; i < 100 && (await box.ok('GET', `/1/mailings/${id}`)).mailing_status !== 'c'; i++)
      await new Promise((r) => setTimeout(r, 200));
    const { split_test } = await box.ok('GET', `/1/mailings/${id}`);
    await box.ok('POST', '/1/sim/open', { mailing_id: id, member_id: ids.ada });
    const opens = await Promise.all(split_test.variants.map(async (v: any) => (await box.ok('GET', `/1/response/${v.mailing_id}`)).opened));
    expect(opens.reduce((a: number, b: number) => a + b, 0)).toBe(1);
    await go(page, `/ui/1/mailings/${id}`);
    const rows = await page.$$eval('[aria-label="Split test variants"] tbody tr', (trs) => trs.map((t) => t.textContent ?? ''));
    expect(rows).toHaveLength(2);
    expect(rows[0]).toContain('Variant A');
    expect(rows[1]).toContain('Variant B');
    const bars = await page.$$eval('[data-chart="variants"] details tbody tr', (trs) => trs.map((t) => t.textContent));
    expect(bars).toEqual(split_test.variants.map((v: any, i: number) => `#${v.mailing_id}${opens[i]}`));
    expect(await page.$('[data-chart="variants"] canvas')).not.toBeNull();
  });

  test('webhooks: a failed delivery under "failures only", its payload, and replay', async () => {
    const { page } = owner;
    // An open of Welcome fires message_open to a receiver that refuses: the delivery fails.
    await box.ok('POST', '/1/sim/open', { mailing_id: ids.welcome, member_id: ids.mallory });
    let failed: any[] = [];
    for (let i = 0; i < 100 && !failed.length; i++) {
      failed = (await box.ok('GET', '/1/webhooks/deliveries?start=0&end=10')).filter((d: any) => d.attempts > 0);
      if (!failed.length) await new Promise((r) => setTimeout(r, 200));
    }
    expect(failed.length).toBeGreaterThan(0);
    const delivery = failed[0];
    // A delivery that succeeds, to a receiver that answers: listed, but not under failures only.
    const port = (receiver.address() as { port: number }).port;
    await box.ok('POST', '/1/webhooks', { url: `http://127.0.0.1:${port}/ok`, event: 'member_signup' });
    await box.ok('POST', '/1/webhooks/trigger', { event: 'member_signup' });
    let delivered: any[] = [];
    for (let i = 0; i < 100 && !delivered.length; i++) {
      delivered = (await box.ok('GET', '/1/webhooks/deliveries?start=0&end=10')).filter((d: any) => d.status === 'o');
      if (!delivered.length) await new Promise((r) => setTimeout(r, 200));
    }
    expect(delivered.length).toBe(1);
    await go(page, '/ui/1/webhooks');
    expect(await textOf(page, '[aria-label="Webhook deliveries"] tbody')).toContain('member_signup');
    await page.click('[data-failed-filter]');
    await page.waitForFunction(() => location.search === '?failed=1');
    await page.waitForFunction(
      () => !document.querySelector('[aria-label="Webhook deliveries"] tbody')?.textContent?.includes('member_signup'),
    );
    const rows = await page.$$eval('[aria-label="Webhook deliveries"] tbody tr', (trs) => trs.map((t) => (t as HTMLElement).textContent));
    expect(rows.some((r) => r.includes(`#${delivery.delivery_id}`) && r.includes('message_open'))).toBe(true);
    // The payload, as text.
    await page.click(`[aria-label="Webhook deliveries"] tbody tr button.link`);
    await page.waitForSelector('[data-payload]');
    expect(await textOf(page, '[data-payload]')).toContain('"mailing_id"');
    // Replay: the dialog names the delivery, the event and the receiver.
    const replay = await page.$$('[aria-label="Webhook deliveries"] tbody tr .confirm > button');
    await replay[0].click();
    const dialog = await page.waitForSelector('dialog[open]');
    const dialogText = await dialog!.evaluate((d) => (d as HTMLElement).textContent);
    expect(dialogText).toContain('message_open');
    expect(dialogText).toContain('http://127.0.0.1:9/refused');
    const outcome = await confirmDialog(page);
    const newId = Number(/#(\d+)/.exec(outcome)?.[1]);
    const replayed = await box.ok('GET', `/1/webhooks/deliveries/${newId}`);
    expect(replayed.replay_of).toBeTruthy();
  });

  test("replay needs the API's role: a user key is refused through the console too", async () => {
    const viewer = await signInWithKey(viewerKey);
    await go(viewer.page, '/ui/1/webhooks');
    await viewer.page.click('[aria-label="Webhook deliveries"] tbody tr .confirm > button');
    await viewer.page.waitForSelector('dialog[open]');
    await viewer.page.click('dialog[open] button[type=submit]');
    await viewer.page.waitForSelector('dialog[open] .error[role=alert]');
    expect(await textOf(viewer.page, 'dialog[open] .error')).toContain('forbidden');
    await viewer.close();
  });

  test('simulate a click: the confirmation names the member, the link and the mailing', async () => {
    const { page } = owner;
    const before = await box.ok('GET', `/1/response/${ids.welcome}`);
    await go(page, `/ui/1/mailings/${ids.welcome}?member=${ids.grace}`);
    const buttons = await page.$$('.confirm > button');
    const labels = await Promise.all(buttons.map((b) => b.evaluate((e) => e.textContent)));
    await buttons[labels.indexOf('Simulate click')].click();
    const dialog = await page.waitForSelector('dialog[open]');
    const text = await dialog!.evaluate((d) => d.textContent ?? '');
    expect(text).toContain('grace@example.com');
    expect(text).toContain('https://example.com/start');
    expect(text).toContain('Welcome');
    await confirmDialog(page);
    const after = await box.ok('GET', `/1/response/${ids.welcome}`);
    expect(after.clicked_unique).toBe(before.clicked_unique + 1);
  });

  test('a write without the CSRF token is refused, and writes nothing', async () => {
    const { page } = owner;
    await go(page, `/ui/1/mailings/${ids.welcome}`);
    const before = await box.ok('GET', `/1/response/${ids.welcome}`);
    const results = await page.evaluate(async (mailingId) => {
      const body = JSON.stringify({ mailing_id: mailingId, member_id: 1 });
      const post = (headers: Record<string, string>) =>
        fetch('/ui/api/1/sim/click', { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body }).then(
          (r) => r.status,
        );
      return [await post({}), await post({ 'x-csrf-token': 'not-the-token' })];
    }, ids.welcome);
    expect(results).toEqual([403, 403]);
    expect((await box.ok('GET', `/1/response/${ids.welcome}`)).clicked).toBe(before.clicked);
  });

  test('cancel a scheduled mailing: the confirmation names it, the write carries the token', async () => {
    const { page } = owner;
    await go(page, `/ui/1/mailings/${ids.launch}`);
    await page.click('.page-head .confirm > button');
    const dialog = await page.waitForSelector('dialog[open]');
    expect(await dialog!.evaluate((d) => (d as HTMLElement).textContent)).toContain('2030-06-01 09:00');
    expect(await confirmDialog(page)).toBe('Mailing canceled.');
    expect((await box.ok('GET', `/1/mailings/${ids.launch}`)).mailing_status).toBe('x');
    // The page reloads the mailing: canceled, and no cancel button any more.
    await page.waitForFunction(() => document.querySelector('.facts .badge')?.textContent === 'canceled');
    expect(await page.$('.page-head .confirm > button')).toBeNull();
  });

  test('"Send a test" on a server without SMTP: the 409 says plainly how to give it one, and nothing is queued', async () => {
    const { page } = owner;
    await go(page, `/ui/1/mailings/${ids.welcome}`);
    await page.type('[data-test-to]', 'me@desk.example');
    await page.click('[data-test-send] .confirm > button');
    const dialog = await page.waitForSelector('dialog[open]');
    expect(await dialog!.evaluate((d) => d.textContent)).toContain('me@desk.example');
    await page.click('dialog[open] button[type=submit]');
    await page.waitForSelector('dialog[open] .error[role=alert]');
    const error = await textOf(page, 'dialog[open] .error[role=alert]');
    expect(error).toMatch(/^no SMTP server is configured, so no real mail can go out: start amsg serve with --smtp URL/);
    expect(await page.$eval('[data-test-send] [data-outcome="error"]', (e) => e.getAttribute('data-status'))).toBe('409');
    await page.keyboard.press('Escape');
    expect(await box.ok('GET', '/1/mail/log')).toEqual([]);
  });

  test('members: search by part of an address, as one types; the query is in the URL', async () => {
    const { page } = owner;
    await go(page, '/ui/1/members');
    await page.type('[data-member-search]', 'grac');
    await page.waitForFunction(() => location.search === '?q=grac');
    await page.waitForFunction(() => document.querySelectorAll('tbody tr').length === 1);
    expect(await textOf(page, 'tbody')).toContain('grace@example.com');
    await go(page, '/ui/1/members?q=example.test');
    expect((await page.$$('tbody tr')).length).toBe(50);
  });

  test('a member: fields, groups, mailings received linking to the message, timeline, SMS', async () => {
    const { page } = owner;
    await go(page, `/ui/1/members/${ids.ada}`);
    await page.waitForSelector('[data-timeline]');
    const text = await page.$eval('main', (m) => (m as HTMLElement).textContent);
    expect(text).toContain('Lovelace');
    expect(text).toContain('Readers');
    expect(await page.$(`a[href="/ui/1/mailings/${ids.welcome}/messages/${ids.ada}"]`)).not.toBeNull();
    expect(await textOf(page, '[data-timeline]')).toMatch(/Opened/);
    expect(await textOf(page, '#subs-h + *')).toContain('Product news');
    await go(page, `/ui/1/members/${ids.grace}`);
    expect(await textOf(page, '#subs-h + *')).toBe('No subscriptions.');
    await go(page, `/ui/1/members/${ids.mallory}`);
    expect(await textOf(page, '#sms-h + *')).toContain('+15550100001');
  });

  test('SMS: the message as a phone shows it, its encoding and segments, its deliveries', async () => {
    const { page } = owner;
    await go(page, `/ui/1/sms/${ids.sms}`);
    expect(await textOf(page, '[data-sms-message]')).toBe('Flash sale today: https://example.com/sale');
    expect(await textOf(page, '[data-encoding]')).toBe('GSM-7');
    expect(await textOf(page, '[data-segments]')).toBe('1');
    expect(await textOf(page, '[aria-label="SMS deliveries"]')).toContain(`member ${ids.mallory}`);
  });

  test('imports and exports: the seed import with its counts, an export to download', async () => {
    const { page } = owner;
    await go(page, '/ui/1/imports');
    const row = await textOf(page, '[aria-label="Recent imports"] tbody tr');
    expect(row).toContain('amsg seed');
    expect(row).toContain('finished');
    expect(row).toContain('20,003');
    // An export of the Readers group, downloaded through the link on the page.
    const readers = (await box.ok('GET', '/1/groups')).find((g: any) => g.group_name === 'Readers').member_group_id;
    const { export_id } = await box.ok('POST', '/1/exports', { user_id: 'owner@localhost', criteria: { groups: [readers] } });
    for (let i = 0; i < 100 && (await box.ok('GET', `/1/exports/${export_id}`)).status !== 'o'; i++)
      await new Promise((r) => setTimeout(r, 200));
    await go(page, '/ui/1/imports');
    const href = await page.$eval(`[aria-label="Recent exports"] a[download]`, (a) => a.getAttribute('href'));
    expect(href).toBe(`/ui/api/1/exports/${export_id}/download`);
    const csv = await page.evaluate(async (url) => {
      const res = await fetch(url!);
      return { type: res.headers.get('content-type'), text: await res.text() };
    }, href);
    expect(csv.type).toMatch(/^text\/csv/);
    expect(csv.text).toContain('grace@example.com');
    expect(csv.text).not.toContain('crowd1@example.test');
  });

  test('markup in the data runs nothing on any page that shows it (CSP bypassed: escaping alone)', async () => {
    const session = await newPage(browser);
    const { page, problems } = session;
    // With the CSP on, inline handlers would be blocked anyway; off, only escaping stands between.
    await page.setBypassCSP(true);
    await useOwnerSession(page);
    const pages = [
      ['/ui/1/members?q=mallory', XSS_TEXT],
      [`/ui/1/members/${ids.mallory}`, XSS_TEXT],
      ['/ui/1/mailings?archived=1&status=x', '<img src=x onerror=window.__xss=4> Launch'],
      [`/ui/1/mailings/${ids.launch}`, '<img src=x onerror=window.__xss=4> Launch'],
      [`/ui/1/mailings/${ids.welcome}?member=${ids.mallory}`, `Hello ${XSS_TEXT}`],
      [`/ui/1/mailings/${ids.welcome}/messages/${ids.mallory}`, `Hello ${XSS_TEXT}`],
      ['/ui/1/webhooks', 'message_open'],
    ];
    for (const [path, shown] of pages) {
      await go(page, path);
      await new Promise((r) => setTimeout(r, 300));
      expect(await page.$eval('main', (m) => (m as HTMLElement).textContent), path).toContain(shown);
      expect(await page.evaluate(() => (window as any).__xss), path).toBeUndefined();
    }
    // The payload of mallory's open, opened on the webhooks page.
    await page.click('[aria-label="Webhook deliveries"] tbody tr button.link');
    await page.waitForSelector('[data-payload]');
    expect(await page.evaluate(() => (window as any).__xss)).toBeUndefined();
    expect(problems.dialogs).toEqual([]);
    expect(await page.$$eval('main img[src="x"], main script, main svg[onload]', (e) => e.length)).toBe(0);
    await session.close();
  });

  test("another account's pages: not found for a sub-account's key; the HQ owner switches accounts", async () => {
    const branch = await signInWithKey(branchKey);
    for (const path of ['/ui/1/mailings', `/ui/1/members/${ids.ada}`, `/ui/1/mailings/${ids.welcome}`]) {
      await branch.page.goto(box.url + path);
      await branch.page.waitForSelector('[role=alert][data-status="404"]');
      expect(await textOf(branch.page, 'main')).not.toContain('Welcome');
    }
    await branch.close();
    const { page } = owner;
    await go(page, '/ui/1/members');
    const options = await page.$$eval('.account-switcher option', (o) => o.map((x) => (x as HTMLOptionElement).value));
    expect(options).toEqual(['1', '2']);
    await page.select('.account-switcher select', '2');
    await page.waitForFunction(() => location.pathname === '/ui/2/members');
    await page.waitForSelector('[data-page="members"][data-loaded="true"]');
  });

  test('axe-core: no serious or critical violation on any page, light and dark', async () => {
    const session = await newPage(browser);
    const { page } = session;
    await page.setBypassCSP(true); // axe is injected as an inline script
    await useOwnerSession(page);
    const pages = [
      '/ui/1/mailings',
      `/ui/1/mailings/${ids.welcome}?member=${ids.ada}`,
      `/ui/1/mailings/${ids.welcome}/messages/${ids.ada}`,
      '/ui/1/members?q=example',
      `/ui/1/members/${ids.ada}`,
      '/ui/1/webhooks',
      '/ui/1/sms',
      `/ui/1/sms/${ids.sms}`,
      '/ui/1/imports',
    ];
    const found: Record<string, unknown> = {};
    for (const theme of ['light', 'dark']) {
      await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: theme }]);
      for (const path of pages) {
        await go(page, path);
        await new Promise((r) => setTimeout(r, 300));
        const violations = await axeViolations(page);
        if (violations.length) found[`${theme} ${path}`] = violations;
      }
    }
    // The sign-in page too (the server's).
    const anon = await newPage(browser);
    await anon.page.setBypassCSP(true);
    await anon.page.goto(`${box.url}/ui/login`);
    const login = await axeViolations(anon.page);
    if (login.length) found['/ui/login'] = login;
    await anon.close();
    await session.close();
    expect(found).toEqual({});
  }, 180_000);

  test('keyboard: the skip link comes first and moves to the content; controls are reachable', async () => {
    const { page } = owner;
    await go(page, '/ui/1/mailings');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
    await page.keyboard.press('Enter');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.closest('main') !== null)).toBe(true);
  });
});
