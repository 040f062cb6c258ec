/**
 * The counters of a response report, the one list everything that names them reads:
 * the service's answers (reports.ts), the CLI's summary and comparison
 * (src/cli/report-view.ts), and the test that holds mailing_response's columns
 * (migration 021, which shipped with its own copy) equal to it. Constants only, so the
 * CLI loads nothing by importing it.
 *
 * In the order of the account's month series (the real service's), which is also the
 * order of the table's columns. `shown`:
 * - summary: a figure of every report, and a row of the CLI's summary and comparison;
 * - report: a figure of every report, left out of the CLI's summary;
 * - apart: in_progress, answered after the figures of a mailing's report (zero once its
 *   send is over) and in no month of the series;
 * - kept: a counter the lists need (hard bounces), no figure of its own.
 * `month`: a column of the CLI's table of the month series (the rest are in its JSON).
 */
export const RESPONSE_COUNTERS = [
  { name: 'in_progress', shown: 'apart' },
  { name: 'sent', shown: 'summary', month: true },
  { name: 'delivered', shown: 'summary', month: true },
  { name: 'bounced', shown: 'summary', month: true },
  { name: 'bounced_hard', shown: 'kept' },
  { name: 'opened', shown: 'summary', month: true },
  { name: 'clicked_unique', shown: 'summary', month: true },
  { name: 'clicked', shown: 'summary', month: true },
  { name: 'forwarded', shown: 'summary' },
  { name: 'shared', shown: 'summary' },
  { name: 'share_clicked', shown: 'report' },
  { name: 'webview_shared', shown: 'report' },
  { name: 'webview_share_clicked', shown: 'report' },
  { name: 'opted_out', shown: 'summary', month: true },
  { name: 'signed_up', shown: 'summary' },
] as const;

type Counter = (typeof RESPONSE_COUNTERS)[number];
export type CounterName = Counter['name'];
/** The figures of a report and of each month of the series, in order. */
export type FigureName = Extract<Counter, { shown: 'summary' | 'report' }>['name'];
export type SummaryFigureName = Extract<Counter, { shown: 'summary' }>['name'];

export const FIGURES = RESPONSE_COUNTERS.filter((c) => c.shown === 'summary' || c.shown === 'report').map((c) => c.name) as FigureName[];
export const SUMMARY_FIGURES = RESPONSE_COUNTERS.filter((c) => c.shown === 'summary').map((c) => c.name) as SummaryFigureName[];
export const MONTH_TABLE_FIGURES = RESPONSE_COUNTERS.filter((c) => 'month' in c).map((c) => c.name) as SummaryFigureName[];
