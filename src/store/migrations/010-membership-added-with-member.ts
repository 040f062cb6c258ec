/**
 * group_members.added_at may be NULL: the member joined the group when it was
 * created (an import puts its new members in their groups in the same batch), so
 * the membership's time is the member's member_since. A million-member import wrote
 * the same 26-character time into each membership, a tenth of all it wrote
 * (bench/RESULTS.md). Readers use COALESCE(gm.added_at, m.member_since).
 */
export const sql = `
  CREATE TABLE group_members_new (
    member_group_id INTEGER NOT NULL REFERENCES member_groups(member_group_id) ON DELETE CASCADE,
    member_id       INTEGER NOT NULL REFERENCES members(member_id) ON DELETE CASCADE,
    added_at        TEXT,
    PRIMARY KEY (member_group_id, member_id)
  ) WITHOUT ROWID;
  INSERT INTO group_members_new (member_group_id, member_id, added_at)
    SELECT member_group_id, member_id, added_at FROM group_members;
  DROP TABLE group_members;
  ALTER TABLE group_members_new RENAME TO group_members;
  CREATE INDEX group_members_member ON group_members(member_id);
`;
