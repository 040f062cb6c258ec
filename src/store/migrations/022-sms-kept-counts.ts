/**
 * Kept row counts of a campaign's deliveries and clicks, so `count=true` on those lists
 * reads one row whatever the campaign's size (it counted every delivery of the campaign).
 * They count the rows as they are, which a member purge shrinks; the campaign's totals
 * (total_sent, deliveries, total_clicks) stay as sent. The send adds each batch's
 * deliveries itself (a trigger a row would cost a 100,000-member send an UPDATE each);
 * deletes (purges, by cascade) and clicks move them in triggers.
 */
export const sql = `
  ALTER TABLE sms_campaigns ADD COLUMN delivery_rows INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE sms_campaigns ADD COLUMN click_rows INTEGER NOT NULL DEFAULT 0;
  UPDATE sms_campaigns SET
    delivery_rows = (SELECT COUNT(*) FROM sms_deliveries d WHERE d.sms_campaign_id = sms_campaigns.sms_campaign_id),
    click_rows = (SELECT COUNT(*) FROM sms_clicks k WHERE k.sms_campaign_id = sms_campaigns.sms_campaign_id);
  CREATE TRIGGER sms_deliveries_kept_count_delete AFTER DELETE ON sms_deliveries BEGIN
    UPDATE sms_campaigns SET delivery_rows = delivery_rows - 1 WHERE sms_campaign_id = OLD.sms_campaign_id;
  END;
  CREATE TRIGGER sms_clicks_kept_count_insert AFTER INSERT ON sms_clicks BEGIN
    UPDATE sms_campaigns SET click_rows = click_rows + 1 WHERE sms_campaign_id = NEW.sms_campaign_id;
  END;
  CREATE TRIGGER sms_clicks_kept_count_delete AFTER DELETE ON sms_clicks BEGIN
    UPDATE sms_campaigns SET click_rows = click_rows - 1 WHERE sms_campaign_id = OLD.sms_campaign_id;
  END;
`;
