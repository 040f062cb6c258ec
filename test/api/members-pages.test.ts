/**
 * Deep pages of the member lists start from kept anchors (every ANCHOR_EVERY-th id of a
 * list, read again after an archive, restore or delete: 024-member-order), not from an
 * OFFSET over the whole index. Each page must still be exactly the OFFSET page of the
 * list as it is now, whatever was added, archived, restored or purged since the anchors
 * were read.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeService, type TestService } from '../helpers.js';
import { ANCHOR_EVERY } from '../../src/service/audience/members.js';
import { addMember, ok } from './util.js';
import { restoreSnapshot, takeSnapshot } from '../../src/store/snapshot.js';
import { dirname, join } from 'node:path';

let s: TestService;
beforeEach(() => {
  s = makeService();
  // 2.6 anchors' worth of members, written straight in (the count triggers keep the counts).
  s.db
    .prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
       INSERT INTO members (account_id, email, member_since, last_modified_at)
       SELECT 1, 'm' || i || '@example.com', '2026-03-04T05:06:07.000000', '2026-03-04T05:06:07.000000' FROM n`,
    )
    .run(Math.round(ANCHOR_EVERY * 2.6));
});
afterEach(() => s.close());

const LISTS = {
  live: { query: {}, where: 'deleted_at IS NULL' },
  archived: { query: { deleted_only: 'true' }, where: 'deleted_at IS NOT NULL' },
  all: { query: { deleted: 'true' }, where: '1' },
} as const;

/** The ids of a list as they are, in order: what every page is a window of. */
const idsOf = (list: keyof typeof LISTS) =>
  s.db.prepare(`SELECT member_id FROM members WHERE account_id = 1 AND ${LISTS[list].where} ORDER BY member_id`).pluck().all() as number[];

async function page(list: keyof typeof LISTS, start: number, end: number): Promise<number[]> {
  const rows = await ok(s, 'GET', '/1/members', { query: { ...LISTS[list].query, start: String(start), end: String(end) } });
  return (rows as { member_id: number }[]).map((m) => m.member_id);
}

/** Pages at and around every anchor, and across two of them, against the list's own window. */
async function expectPagesRight(list: keyof typeof LISTS) {
  const ids = idsOf(list);
  const starts = [0, ANCHOR_EVERY - 1, ANCHOR_EVERY, ANCHOR_EVERY + 7, 2 * ANCHOR_EVERY - 3, 2 * ANCHOR_EVERY, ids.length - 2].filter(
    (x) => x >= 0,
  );
  for (const start of starts) expect(await page(list, start, start + 5), `${list} from ${start}`).toEqual(ids.slice(start, start + 5));
}

describe('deep member pages', () => {
  it('are the same windows as an OFFSET walk, for live, archived and all members', async () => {
    // Archive every third member so the archived list is deep too.
    s.db.prepare("UPDATE members SET deleted_at = '2026-03-05T00:00:00.000000' WHERE member_id % 3 = 0").run();
    for (const list of ['live', 'archived', 'all'] as const) await expectPagesRight(list);
  });

  it('stay right after adds at the end, and after an archive, a restore and a purge before an anchor', async () => {
    await expectPagesRight('live');
    // Adds go to the end: the anchors read above still hold.
    for (let i = 0; i < 3; i++) await addMember(s, `new${i}@example.com`);
    await expectPagesRight('live');
    // An archive before the first anchor moves every later position by one.
    await ok(s, 'DELETE', '/1/members/5');
    await expectPagesRight('live');
    await expectPagesRight('archived');
    // A restore (as a write on another connection would do it: the trigger counts it too).
    s.db.prepare('UPDATE members SET deleted_at = NULL WHERE member_id = 5').run();
    await expectPagesRight('live');
    // A purge of an archived member moves the archived and the all lists.
    await ok(s, 'DELETE', '/1/members/10');
    await expectPagesRight('all');
    await ok(s, 'POST', '/1/members/purge', { body: { member_ids: [10] } });
    await expectPagesRight('all');
    await expectPagesRight('archived');
    await expectPagesRight('live');
  });

  it('stay right when `db restore` puts back an older state under the running service (the version is random, not a count)', async () => {
    const snapshot = join(dirname(s.file), 'before.db');
    await takeSnapshot(s.file, snapshot);
    await ok(s, 'DELETE', '/1/members/5');
    await ok(s, 'DELETE', '/1/members/6');
    await expectPagesRight('live');
    await restoreSnapshot(snapshot, s.file);
    // Two other changes after the restore (an archive and its undoing), before any page is
    // read: a count would be back at the value the two archives gave it, with another
    // list behind it, and the anchors kept from before the restore would be used.
    await ok(s, 'DELETE', '/1/members/7');
    s.db.prepare('UPDATE members SET deleted_at = NULL WHERE member_id = 7').run();
    await expectPagesRight('live');
    await expectPagesRight('archived');
  });

  it('walk the live index from the anchor by key, never a scan or a sort', () => {
    const plan = s.db
      .prepare(
        `EXPLAIN QUERY PLAN SELECT m.* FROM (SELECT member_id FROM members WHERE account_id = 1 AND deleted_at IS NULL AND member_id > 1000
           ORDER BY member_id LIMIT 50 OFFSET 10) AS page CROSS JOIN members m ON m.member_id = page.member_id ORDER BY page.member_id`,
      )
      .all()
      .map((r) => (r as { detail: string }).detail);
    expect(plan.join('\n')).toContain('SEARCH members USING INDEX members_live (account_id=? AND rowid>?)');
    expect(plan.join('\n')).not.toMatch(/TEMP B-TREE|SCAN members\b(?! USING)/);
  });
});
