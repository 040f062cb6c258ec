/**
 * A mailing's audience references of one role and kind in the order they were given
 * (recipient_groups, recipient_members … of the detail record, and the per-mailing
 * lists). The primary key finds them but in ref_id order, so each read sorted them,
 * and a list of its groups read (and sorted) every member named individually too:
 * 0.2 s for a mailing with 100,000 named members. Written when a mailing is created,
 * never by an import or a send.
 */
export const sql = `
  CREATE INDEX mailing_audience_position ON mailing_audience(mailing_id, role, kind, position);
`;
