/**
 * Opens and clicks over time (GET /response/{mailing_id}/timeline, the console's
 * chart), kept by the writes like the other response counts (021): a row per mailing,
 * unit and minute or hour with the opens and clicks in it, so a chart reads its
 * buckets, never the opens. A mailing's first open by a member (mailing_messages.opened)
 * is an open; every mailing_clicks row a click. As in mailing_response, both the sent
 * mailing and the content it used count (a split test's parent and its variant).
 * `at` is the stored timestamp cut to the minute (16 characters) or the hour (13).
 */
const UNITS = `(SELECT 'm' AS unit, 16 AS len UNION ALL SELECT 'h', 13) u`;
/** Adds `opens` and `clicks` at `ts` for row's mailing and its content. */
const add = (row: 'NEW', ts: string, opens: string, clicks: string) => `
    INSERT INTO mailing_response_times (mailing_id, unit, at, opens, clicks)
      SELECT ids.id, u.unit, substr(${ts}, 1, u.len), ${opens}, ${clicks}
        FROM (SELECT ${row}.mailing_id AS id UNION SELECT ${row}.content_mailing_id) ids CROSS JOIN ${UNITS}
       WHERE true
      ON CONFLICT (mailing_id, unit, at) DO UPDATE SET opens = opens + excluded.opens, clicks = clicks + excluded.clicks;`;

/** Takes them away again when the record goes (a purge): the rows are there, since adding made them. */
const remove = (ts: string, opens: string, clicks: string) => `
    UPDATE mailing_response_times SET opens = opens - ${opens}, clicks = clicks - ${clicks}
     WHERE mailing_id IN (OLD.mailing_id, OLD.content_mailing_id)
       AND (unit = 'm' AND at = substr(${ts}, 1, 16) OR unit = 'h' AND at = substr(${ts}, 1, 13));`;

export const sql = `
  CREATE TABLE mailing_response_times (
    mailing_id INTEGER NOT NULL REFERENCES mailings(mailing_id) ON DELETE CASCADE,
    unit       TEXT NOT NULL CHECK (unit IN ('m','h')),
    at         TEXT NOT NULL,
    opens      INTEGER NOT NULL DEFAULT 0,
    clicks     INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (mailing_id, unit, at)
  ) WITHOUT ROWID;

  -- Backfill from what an existing database holds (the opened ones by their partial index).
  INSERT INTO mailing_response_times (mailing_id, unit, at, opens, clicks)
    SELECT id, unit, at, SUM(opens), SUM(clicks) FROM (
      SELECT mm.mailing_id AS id, u.unit, substr(mm.opened, 1, u.len) AS at, 1 AS opens, 0 AS clicks
        FROM mailing_messages mm CROSS JOIN ${UNITS} WHERE mm.opened IS NOT NULL
      UNION ALL
      SELECT mm.content_mailing_id, u.unit, substr(mm.opened, 1, u.len), 1, 0
        FROM mailing_messages mm CROSS JOIN ${UNITS} WHERE mm.opened IS NOT NULL AND mm.content_mailing_id <> mm.mailing_id
      UNION ALL
      SELECT c.mailing_id, u.unit, substr(c.clicked_at, 1, u.len), 0, 1 FROM mailing_clicks c CROSS JOIN ${UNITS}
      UNION ALL
      SELECT c.content_mailing_id, u.unit, substr(c.clicked_at, 1, u.len), 0, 1
        FROM mailing_clicks c CROSS JOIN ${UNITS} WHERE c.content_mailing_id <> c.mailing_id)
    GROUP BY id, unit, at;

  CREATE TRIGGER response_times_opened AFTER UPDATE OF opened ON mailing_messages
    WHEN OLD.opened IS NULL AND NEW.opened IS NOT NULL
  BEGIN ${add('NEW', 'NEW.opened', '1', '0')} END;
  CREATE TRIGGER response_times_message_gone AFTER DELETE ON mailing_messages WHEN OLD.opened IS NOT NULL
  BEGIN ${remove('OLD.opened', '1', '0')} END;
  CREATE TRIGGER response_times_click AFTER INSERT ON mailing_clicks
  BEGIN ${add('NEW', 'NEW.clicked_at', '0', '1')} END;
  CREATE TRIGGER response_times_click_gone AFTER DELETE ON mailing_clicks
  BEGIN ${remove('OLD.clicked_at', '0', '1')} END;
`;
