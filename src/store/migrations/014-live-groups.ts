/**
 * An account's live groups in id order, so the group list and a member's groups are
 * read in order instead of sorted (member_groups_live_name orders them by name).
 */
export const sql = `
  CREATE INDEX member_groups_live ON member_groups(account_id) WHERE deleted_at IS NULL;
`;
