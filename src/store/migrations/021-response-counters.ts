/**
 * Response reports (GET /response…): a mailing's counts kept by the writes that move
 * them, and the records behind each count, so a summary is one row at any audience
 * size and each list walks an index.
 *
 * - mailing_response: one row per sent mailing and per split-test variant. The sent
 *   mailing's row counts all its messages (a split test's is the whole); a variant's
 *   counts the messages built with its content. `started_at` (the send's start) puts
 *   a sent mailing in the account's month series; variants have none.
 *   `sent`, `delivered` and `in_progress` are moved by the send (src/service/mailings/sending.ts,
 *   a few statements per batch of 10,000); every other count by the triggers below,
 *   inside the statement that writes the record, so no code path can forget one and a
 *   purge (whose cascades delete the records) takes its counts with it.
 * - mailing_clicks: every simulated click (a member may click many times, or no link
 *   when the mailing has none); mailing_links gains its unique and total clicks.
 * - mailing_forwards: each forward a member made, naming the forward mailing (which
 *   also keeps forwards out of the account's series).
 * - mailing_optouts: opt-outs made through a mailing's link, copied by a trigger from
 *   member_optouts with the content the member got (the member's history row is the
 *   spine's; this one is the mailing's record of it).
 * - mailing_messages gains bounce_type, and partial indexes that give each event list
 *   its rows in member id order without reading the messages that lack the event.
 *
 * A database that already has sends is backfilled from its messages (clicks made
 * before this migration are one click each, on no link; forwards made before it were
 * not recorded as such and stay uncounted).
 */
const COUNTS = [
  'in_progress',
  'sent',
  'delivered',
  'bounced',
  'bounced_hard',
  'opened',
  'clicked_unique',
  'clicked',
  'forwarded',
  'shared',
  'share_clicked',
  'webview_shared',
  'webview_share_clicked',
  'opted_out',
  'signed_up',
];

/** Adds `by` to `column` of the rows of a sent mailing and of the content it used (the same row unless a variant). */
const bump = (column: string, by: string, row: 'NEW' | 'OLD') =>
  `UPDATE mailing_response SET ${column} = ${column} + ${by} WHERE mailing_id IN (${row}.mailing_id, ${row}.content_mailing_id);`;

export const sql = `
  CREATE TABLE mailing_response (
    mailing_id INTEGER PRIMARY KEY REFERENCES mailings(mailing_id) ON DELETE CASCADE,
    account_id INTEGER NOT NULL,
    started_at TEXT,
    ${COUNTS.map((c) => `${c} INTEGER NOT NULL DEFAULT 0`).join(',\n    ')}
  );
  CREATE INDEX mailing_response_started ON mailing_response(account_id, started_at) WHERE started_at IS NOT NULL;

  ALTER TABLE mailing_messages ADD COLUMN bounce_type TEXT CHECK (bounce_type IN ('hard','soft'));
  CREATE INDEX mailing_messages_opened ON mailing_messages(mailing_id, member_id) WHERE opened IS NOT NULL;
  CREATE INDEX mailing_messages_bounced ON mailing_messages(mailing_id, member_id) WHERE bounced IS NOT NULL;
  CREATE INDEX mailing_messages_shared ON mailing_messages(mailing_id, member_id) WHERE shared IS NOT NULL;

  ALTER TABLE mailing_links ADD COLUMN unique_clicks INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE mailing_links ADD COLUMN total_clicks INTEGER NOT NULL DEFAULT 0;

  CREATE TABLE mailing_clicks (
    click_id           INTEGER PRIMARY KEY,
    mailing_id         INTEGER NOT NULL REFERENCES mailings(mailing_id) ON DELETE CASCADE,
    content_mailing_id INTEGER NOT NULL,
    member_id          INTEGER NOT NULL REFERENCES members(member_id) ON DELETE CASCADE,
    link_id            INTEGER REFERENCES mailing_links(link_id) ON DELETE CASCADE,
    clicked_at         TEXT NOT NULL
  );
  CREATE INDEX mailing_clicks_mailing ON mailing_clicks(mailing_id);
  CREATE INDEX mailing_clicks_member ON mailing_clicks(mailing_id, member_id);
  CREATE INDEX mailing_clicks_link ON mailing_clicks(link_id) WHERE link_id IS NOT NULL;

  CREATE TABLE mailing_forwards (
    forward_mailing_id INTEGER PRIMARY KEY REFERENCES mailings(mailing_id) ON DELETE CASCADE,
    mailing_id         INTEGER NOT NULL REFERENCES mailings(mailing_id) ON DELETE CASCADE,
    content_mailing_id INTEGER NOT NULL,
    member_id          INTEGER NOT NULL REFERENCES members(member_id) ON DELETE CASCADE,
    forwarded_at       TEXT NOT NULL
  );
  CREATE INDEX mailing_forwards_mailing ON mailing_forwards(mailing_id);

  CREATE TABLE mailing_optouts (
    optout_id          INTEGER PRIMARY KEY REFERENCES member_optouts(optout_id) ON DELETE CASCADE,
    mailing_id         INTEGER NOT NULL REFERENCES mailings(mailing_id) ON DELETE CASCADE,
    content_mailing_id INTEGER NOT NULL,
    member_id          INTEGER NOT NULL REFERENCES members(member_id) ON DELETE CASCADE,
    opted_out_at       TEXT NOT NULL
  );
  CREATE INDEX mailing_optouts_mailing ON mailing_optouts(mailing_id);

  -- Backfill from what an existing database holds.
  INSERT INTO mailing_response (mailing_id, account_id, started_at)
    SELECT mailing_id, account_id, CASE WHEN split_test_id IS NULL THEN send_started END
      FROM mailings WHERE send_started IS NOT NULL;
  UPDATE mailing_messages SET bounce_type = 'soft' WHERE bounced IS NOT NULL;
  INSERT INTO mailing_clicks (mailing_id, content_mailing_id, member_id, link_id, clicked_at)
    SELECT mailing_id, content_mailing_id, member_id, NULL, clicked FROM mailing_messages WHERE clicked IS NOT NULL;
  INSERT INTO mailing_optouts (optout_id, mailing_id, content_mailing_id, member_id, opted_out_at)
    SELECT o.optout_id, o.mailing_id, mm.content_mailing_id, o.member_id, o.optout_ts
      FROM member_optouts o JOIN mailing_messages mm ON mm.mailing_id = o.mailing_id AND mm.member_id = o.member_id;
  UPDATE mailing_response SET
    in_progress = (SELECT COUNT(*) FROM mailing_queue q WHERE q.mailing_id = mailing_response.mailing_id
                      OR q.content_mailing_id = mailing_response.mailing_id AND q.mailing_id <> mailing_response.mailing_id),
    (sent, delivered, bounced, bounced_hard, opened, clicked_unique, clicked, shared) = (
      SELECT COUNT(*), COUNT(*) - COUNT(bounced), COUNT(bounced), 0, COUNT(opened), COUNT(clicked), COUNT(clicked), COUNT(shared)
        FROM mailing_messages mm
       WHERE mm.mailing_id = mailing_response.mailing_id OR mm.content_mailing_id = mailing_response.mailing_id),
    opted_out = (SELECT COUNT(*) FROM mailing_optouts o
                  WHERE o.mailing_id = mailing_response.mailing_id OR o.content_mailing_id = mailing_response.mailing_id);
  UPDATE mailing_response SET in_progress = 0
   WHERE mailing_id IN (SELECT mailing_id FROM mailings WHERE mailing_status IN ('x','f'));

  -- Each count moves with the record that makes it (see the header).
  CREATE TRIGGER response_bounced AFTER UPDATE OF bounced ON mailing_messages
    WHEN OLD.bounced IS NULL AND NEW.bounced IS NOT NULL
  BEGIN
    UPDATE mailing_response SET bounced = bounced + 1, delivered = delivered - 1
     WHERE mailing_id IN (NEW.mailing_id, NEW.content_mailing_id);
  END;
  CREATE TRIGGER response_bounced_hard AFTER UPDATE OF bounce_type ON mailing_messages
    WHEN OLD.bounce_type IS NOT 'hard' AND NEW.bounce_type = 'hard'
  BEGIN ${bump('bounced_hard', '1', 'NEW')} END;
  CREATE TRIGGER response_opened AFTER UPDATE OF opened ON mailing_messages
    WHEN OLD.opened IS NULL AND NEW.opened IS NOT NULL
  BEGIN ${bump('opened', '1', 'NEW')} END;
  CREATE TRIGGER response_clicked AFTER UPDATE OF clicked ON mailing_messages
    WHEN OLD.clicked IS NULL AND NEW.clicked IS NOT NULL
  BEGIN ${bump('clicked_unique', '1', 'NEW')} END;
  CREATE TRIGGER response_shared AFTER UPDATE OF shared ON mailing_messages
    WHEN OLD.shared IS NULL AND NEW.shared IS NOT NULL
  BEGIN ${bump('shared', '1', 'NEW')} END;
  CREATE TRIGGER response_message_gone AFTER DELETE ON mailing_messages BEGIN
    UPDATE mailing_response SET
        sent = sent - 1,
        delivered = delivered - (OLD.bounced IS NULL),
        bounced = bounced - (OLD.bounced IS NOT NULL),
        bounced_hard = bounced_hard - (OLD.bounce_type IS 'hard'),
        opened = opened - (OLD.opened IS NOT NULL),
        clicked_unique = clicked_unique - (OLD.clicked IS NOT NULL),
        shared = shared - (OLD.shared IS NOT NULL)
     WHERE mailing_id IN (OLD.mailing_id, OLD.content_mailing_id);
  END;

  CREATE TRIGGER response_click AFTER INSERT ON mailing_clicks BEGIN
    ${bump('clicked', '1', 'NEW')}
    UPDATE mailing_links SET total_clicks = total_clicks + 1,
        unique_clicks = unique_clicks + NOT EXISTS (SELECT 1 FROM mailing_clicks c
                          WHERE c.mailing_id = NEW.mailing_id AND c.member_id = NEW.member_id
                            AND c.link_id = NEW.link_id AND c.click_id <> NEW.click_id)
     WHERE link_id = NEW.link_id;
  END;
  CREATE TRIGGER response_click_gone AFTER DELETE ON mailing_clicks BEGIN
    ${bump('clicked', '-1', 'OLD')}
    UPDATE mailing_links SET total_clicks = total_clicks - 1,
        unique_clicks = unique_clicks - NOT EXISTS (SELECT 1 FROM mailing_clicks c
                          WHERE c.mailing_id = OLD.mailing_id AND c.member_id = OLD.member_id AND c.link_id = OLD.link_id)
     WHERE link_id = OLD.link_id;
  END;

  CREATE TRIGGER response_forward AFTER INSERT ON mailing_forwards BEGIN ${bump('forwarded', '1', 'NEW')} END;
  CREATE TRIGGER response_forward_gone AFTER DELETE ON mailing_forwards BEGIN ${bump('forwarded', '-1', 'OLD')} END;

  CREATE TRIGGER response_optout_record AFTER INSERT ON member_optouts WHEN NEW.mailing_id IS NOT NULL BEGIN
    INSERT INTO mailing_optouts (optout_id, mailing_id, content_mailing_id, member_id, opted_out_at)
      SELECT NEW.optout_id, NEW.mailing_id, mm.content_mailing_id, NEW.member_id, NEW.optout_ts
        FROM mailing_messages mm WHERE mm.mailing_id = NEW.mailing_id AND mm.member_id = NEW.member_id;
  END;
  CREATE TRIGGER response_optout AFTER INSERT ON mailing_optouts BEGIN ${bump('opted_out', '1', 'NEW')} END;
  CREATE TRIGGER response_optout_gone AFTER DELETE ON mailing_optouts BEGIN ${bump('opted_out', '-1', 'OLD')} END;
`;
