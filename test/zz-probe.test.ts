import { it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDb } from '/work/main/src/store/db.js';
import { fixedClock } from '/work/main/src/service/clock.js';
import { initialize } from '/work/main/src/service/accounts.js';
import { startServer } from '/work/main/src/server/server.js';

it('probe', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'probe-'));
  const db = openDb(join(dir, 'a.db'));
  const clock = fixedClock('2026-01-01T00:00:00Z');
  const init = initialize(db, clock);
  const srv = await startServer({ db, clock });
  srv.server.on('request', (req) => { const t0 = Date.now(); req.on('end', () => console.log('end', Date.now() - t0)); req.on('close', () => console.log('close', Date.now() - t0, req.complete)); req.on('aborted', () => console.log('aborted', Date.now() - t0)); });
  const auth = 'Basic ' + Buffer.from(`${init.public_key}:${init.private_key}`).toString('base64');
  for (let i = 0; i < 4; i++) {
    const t0 = Date.now();
    const big = new ReadableStream({ async pull(c) { 
      (this as any).n = ((this as any).n ?? 0) + 1;
      if ((this as any).n > 200) return c.close();
      c.enqueue(new Uint8Array(64 * 1024).fill(32)); } });
    try {
      const r = await fetch(srv.url + '/1/fields', { method: 'POST', body: big, headers: { authorization: auth }, duplex: 'half' } as any);
      console.log('headers', Date.now() - t0);
      const t = await r.text();
      console.log('client', r.status, Date.now() - t0);
    } catch (e) { console.log('client ERR', (e as any).cause?.code, Date.now() - t0); }
  }
  await srv.close();
}, 60000);
