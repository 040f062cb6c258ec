/**
 * members_status indexes only the members who are not active (a). Active members
 * are nearly all of a large account, so a query for them reads the account's
 * members anyway; the index is for finding the few opted-out, error or forward
 * members, and an entry per active member cost about a twelfth of a million-member
 * import (bench/RESULTS.md). A query uses it when its WHERE has the term
 * `member_status_id <> 'a'` (SQLite does not infer it from `= 'o'`): see
 * `statusIs` in src/service/audience/members.ts.
 */
export const sql = `
  DROP INDEX members_status;
  CREATE INDEX members_status ON members(account_id, member_status_id) WHERE member_status_id <> 'a';
`;
