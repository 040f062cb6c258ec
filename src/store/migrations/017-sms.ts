/**
 * SMS: campaigns, the recipients a send still has to reach, one delivery per recipient,
 * shortened links and their clicks, each account's SMS settings, and credit usage per
 * UTC day (kept by the send, so a usage window is a few key lookups whatever was sent).
 */
export const sql = `
  CREATE TABLE sms_campaigns (
    sms_campaign_id      INTEGER PRIMARY KEY,
    account_id           INTEGER NOT NULL REFERENCES accounts(account_id),
    sms_campaign_name    TEXT NOT NULL,
    sms_campaign_type    TEXT NOT NULL DEFAULT 'm' CHECK (sms_campaign_type IN ('m')),
    -- d draft, s scheduled, p pending, i sending, c complete, x canceled, f failed (docs/guide/sms.md)
    send_status          TEXT NOT NULL DEFAULT 'd' CHECK (send_status IN ('d','s','p','i','c','x','f')),
    from_phone_number    TEXT NOT NULL,
    -- as written; sent_message is what goes out (links shortened), frozen when the send is asked for
    message              TEXT NOT NULL,
    sent_message         TEXT,
    message_segments     INTEGER NOT NULL DEFAULT 0,
    deliveries           INTEGER NOT NULL DEFAULT 0,
    bounces              INTEGER NOT NULL DEFAULT 0,
    opt_outs             INTEGER NOT NULL DEFAULT 0,
    total_sent           INTEGER NOT NULL DEFAULT 0,
    total_clicks         INTEGER NOT NULL DEFAULT 0,
    unique_clicks        INTEGER NOT NULL DEFAULT 0,
    is_promotional       INTEGER NOT NULL DEFAULT 0 CHECK (is_promotional IN (0,1)),
    is_test              INTEGER NOT NULL DEFAULT 0 CHECK (is_test IN (0,1)),
    shorten_links        INTEGER NOT NULL DEFAULT 0 CHECK (shorten_links IN (0,1)),
    media_url            TEXT,
    -- JSON {groups, members, segments, suppression_segments}: arrays of ids in the order given
    recipients           TEXT NOT NULL,
    created_at           TEXT NOT NULL,
    updated_at           TEXT NOT NULL,
    archived_at          TEXT,
    pending_at           TEXT,
    scheduled_at         TEXT,
    send_started         TEXT,
    send_finished        TEXT,
    canceled_by_user_id  INTEGER,
    scheduled_by_user_id INTEGER,
    copied_from_sms_campaign_id INTEGER REFERENCES sms_campaigns(sms_campaign_id),
    results_message      TEXT
  );
  CREATE INDEX sms_campaigns_account ON sms_campaigns(account_id);
  -- What the job runner looks for after every local call: only campaigns on their way out.
  CREATE INDEX sms_campaigns_due ON sms_campaigns(send_status, scheduled_at) WHERE send_status IN ('s','p','i');

  -- Recipients resolved when the send starts and not yet given a delivery.
  CREATE TABLE sms_queue (
    sms_campaign_id INTEGER NOT NULL REFERENCES sms_campaigns(sms_campaign_id) ON DELETE CASCADE,
    member_id       INTEGER NOT NULL REFERENCES members(member_id) ON DELETE CASCADE,
    PRIMARY KEY (sms_campaign_id, member_id)
  ) WITHOUT ROWID;

  -- One per recipient: d delivered, b bounced (bounce_type h: the number cannot be reached).
  CREATE TABLE sms_deliveries (
    sms_campaign_id  INTEGER NOT NULL REFERENCES sms_campaigns(sms_campaign_id) ON DELETE CASCADE,
    member_id        INTEGER NOT NULL REFERENCES members(member_id) ON DELETE CASCADE,
    delivery_type    TEXT NOT NULL CHECK (delivery_type IN ('d','b')),
    bounce_type      TEXT CHECK (bounce_type IN ('h')),
    to_phone_number  TEXT NOT NULL,
    message_segments INTEGER NOT NULL,
    sent_at          TEXT NOT NULL,
    opted_out_at     TEXT,
    PRIMARY KEY (sms_campaign_id, member_id)
  ) WITHOUT ROWID;
  CREATE INDEX sms_deliveries_member ON sms_deliveries(member_id);

  CREATE TABLE sms_links (
    sms_link_id     INTEGER PRIMARY KEY,
    sms_campaign_id INTEGER NOT NULL REFERENCES sms_campaigns(sms_campaign_id) ON DELETE CASCADE,
    link_target     TEXT NOT NULL,
    link_order      INTEGER NOT NULL
  );
  CREATE INDEX sms_links_campaign ON sms_links(sms_campaign_id);

  CREATE TABLE sms_clicks (
    sms_click_id    INTEGER PRIMARY KEY,
    sms_campaign_id INTEGER NOT NULL REFERENCES sms_campaigns(sms_campaign_id) ON DELETE CASCADE,
    member_id       INTEGER NOT NULL REFERENCES members(member_id) ON DELETE CASCADE,
    sms_link_id     INTEGER NOT NULL REFERENCES sms_links(sms_link_id) ON DELETE CASCADE,
    to_phone_number TEXT NOT NULL,
    click_timestamp TEXT NOT NULL
  );
  -- a campaign's clicks in click order; whether a member clicked before
  CREATE INDEX sms_clicks_campaign ON sms_clicks(sms_campaign_id);
  CREATE INDEX sms_clicks_campaign_member ON sms_clicks(sms_campaign_id, member_id);
  CREATE INDEX sms_clicks_member ON sms_clicks(member_id);

  -- No row: the defaults (no limit, not visible).
  CREATE TABLE sms_settings (
    account_id                        INTEGER PRIMARY KEY REFERENCES accounts(account_id),
    sub_message_segment_limit         INTEGER NOT NULL DEFAULT 0 CHECK (sub_message_segment_limit >= 0),
    sub_message_segment_limit_visible INTEGER NOT NULL DEFAULT 0 CHECK (sub_message_segment_limit_visible IN (0,1)),
    updated_at                        TEXT NOT NULL
  );

  -- Segments sent per account and UTC day ('YYYY-MM-DD'), added to by each send batch.
  CREATE TABLE sms_usage (
    account_id INTEGER NOT NULL REFERENCES accounts(account_id),
    day        TEXT NOT NULL,
    segments   INTEGER NOT NULL,
    PRIMARY KEY (account_id, day)
  ) WITHOUT ROWID;
`;
