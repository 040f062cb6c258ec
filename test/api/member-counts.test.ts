import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeService, type TestService } from '../helpers.js';
import { addMember, createGroups, ok, setStatus } from './util.js';

/** GET /members/counts: the kept counts by status, live and archived, of the account or a group. */

let s: TestService;
beforeEach(() => (s = makeService()));
afterEach(() => s.close());

describe('member counts', () => {
  it('answers live and archived members by status, of the account and of one group, and counts from kept rows only', async () => {
    const [gold, silver] = await createGroups(s, 'Gold', 'Silver');
    await addMember(s, 'a@example.com', { group_ids: [gold] });
    const b = await addMember(s, 'b@example.com', { group_ids: [gold] });
    const c = await addMember(s, 'c@example.com', { group_ids: [gold, silver] });
    await addMember(s, 'd@example.com');
    await setStatus(s, [b, c], 'o');
    await ok(s, 'DELETE', `/1/members/${c}`);
    expect(await ok(s, 'GET', '/1/members/counts')).toEqual({ live: { a: 2, e: 0, o: 1, f: 0 }, archived: { a: 0, e: 0, o: 1, f: 0 } });
    expect(await ok(s, 'GET', '/1/members/counts', { query: { group_id: String(gold) } })).toEqual({
      live: { a: 1, e: 0, o: 1, f: 0 },
      archived: { a: 0, e: 0, o: 1, f: 0 },
    });
    expect(await ok(s, 'GET', '/1/members/counts', { query: { group_id: String(silver) } })).toEqual({
      live: { a: 0, e: 0, o: 0, f: 0 },
      archived: { a: 0, e: 0, o: 1, f: 0 },
    });
    // The counts are the kept ones: one statement on member_counts, none on members.
    const t = makeService(undefined, { trace: true });
    try {
      await addMember(t, 'x@example.com');
      const { result, statements } = await t.capture(() => t.call('GET', '/1/members/counts'));
      expect(result.body).toEqual({ live: { a: 1, e: 0, o: 0, f: 0 }, archived: { a: 0, e: 0, o: 0, f: 0 } });
      const reads = statements.filter((q) => /^\s*SELECT\b/i.test(q));
      expect(reads.some((q) => /\bmember_counts\b/.test(q))).toBe(true);
      expect(reads.filter((q) => /\bFROM members\b/.test(q))).toEqual([]);
    } finally {
      t.close();
    }
  });

  it("is a 404 for a group that is not the account's, and a 400 naming group_id for a bad id", async () => {
    expect(await s.call('GET', '/1/members/counts', { query: { group_id: '99' } })).toEqual({
      status: 404,
      body: { error: 'group 99 not found' },
    });
    const bad = await s.call('GET', '/1/members/counts', { query: { group_id: 'x' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/^group_id: /);
  });
});
