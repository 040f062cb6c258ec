import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeService, type TestService } from '../helpers.js';
import { FIGURES, RESPONSE_COUNTERS, SUMMARY_FIGURES } from '../../src/service/mailings/report-figures.js';
import { MONTH_COLUMNS, SUMMARY_ROWS } from '../../src/cli/report-view.js';

/** The one list of response counters agrees with the table migration 021 made, and with what each reader shows. */

let s: TestService;
beforeEach(() => (s = makeService()));
afterEach(() => s.close());

describe('response report counters', () => {
  it("are mailing_response's counter columns, in the table's order", () => {
    const columns = (s.db.prepare('SELECT name FROM pragma_table_info(?) ORDER BY cid').pluck().all('mailing_response') as string[]).filter(
      (c) => !['mailing_id', 'account_id', 'started_at'].includes(c),
    );
    expect(columns).toEqual(RESPONSE_COUNTERS.map((c) => c.name));
  });

  it('give the figures of a report and of the series, and the rows of the CLI summary', () => {
    expect(FIGURES).toEqual([
      'sent',
      'delivered',
      'bounced',
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
    ]);
    expect(SUMMARY_FIGURES).toEqual([
      'sent',
      'delivered',
      'bounced',
      'opened',
      'clicked_unique',
      'clicked',
      'forwarded',
      'shared',
      'opted_out',
      'signed_up',
    ]);
    expect(SUMMARY_ROWS).toEqual(['recipient_count', ...SUMMARY_FIGURES, 'in_progress', 'delivered_rate', 'open_rate', 'clicks_per_open']);
    expect(MONTH_COLUMNS).toEqual([
      'year',
      'month',
      'mailings',
      'sent',
      'delivered',
      'bounced',
      'opened',
      'clicked_unique',
      'clicked',
      'opted_out',
      'delivered_rate',
      'open_rate',
      'clicks_per_open',
    ]);
  });
});
