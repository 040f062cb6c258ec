/**
 * How response reports are shown to people: the rates beside the counts, a
 * side-by-side comparison, and the live `--watch` view (Ink and React load only when
 * it is drawn, on a terminal). The counts themselves are the service's, and so is the
 * list of them (src/service/mailings/report-figures.ts, which the engine loads too: so this
 * module is loaded only by the reports commands, when they run, or esbuild would split
 * that list into a file every command loads).
 */
import type { Api } from '../client/api.js';
import { MONTH_TABLE_FIGURES, SUMMARY_FIGURES, type SummaryFigureName } from '../service/mailings/report-figures.js';
import { loadInk } from './ink.js';
import { thousands } from './output.js';

/** GET /response/{mailing_id}, as the service answers it. */
export type MailingResponse = { name: string; subject: string } & Record<'recipient_count' | SummaryFigureName | 'in_progress', number> & {
    [more: string]: unknown;
  };

type Counts = Pick<MailingResponse, 'sent' | 'delivered' | 'opened' | 'clicked'>;

const percent = (part: number, whole: number) => (whole ? `${((100 * part) / whole).toFixed(1)}%` : '-');

/** The rates a marketer reads first: delivered of sent, opened of delivered, clicks per open. */
export function rates(c: Counts) {
  return {
    delivered_rate: percent(c.delivered, c.sent),
    open_rate: percent(c.opened, c.delivered),
    clicks_per_open: c.opened ? (c.clicked / c.opened).toFixed(2) : '-',
  };
}

/** The figures a comparison and a summary table show, in this order. */
export const SUMMARY_ROWS = [
  'recipient_count',
  ...SUMMARY_FIGURES,
  'in_progress',
  'delivered_rate',
  'open_rate',
  'clicks_per_open',
] as const;

/** The columns of the month series' table, in this order. */
export const MONTH_COLUMNS = ['year', 'month', 'mailings', ...MONTH_TABLE_FIGURES, 'delivered_rate', 'open_rate', 'clicks_per_open'];

/** Several mailings side by side: one row a figure, one column a mailing. */
export function comparison(reports: { mailing_id: number; report: MailingResponse }[]) {
  const withRates = reports.map((r) => ({ id: r.mailing_id, values: { ...r.report, ...rates(r.report) } as Record<string, unknown> }));
  const head = (r: { id: number }) => `${r.id} ${reports.find((x) => x.mailing_id === r.id)!.report.name}`;
  return [...SUMMARY_ROWS.map((figure) => ({ figure, ...Object.fromEntries(withRates.map((r) => [head(r), r.values[figure]])) }))];
}

// ---------------------------------------------------------------- the live view

interface LinkRow {
  link_id: number;
  link_name: string;
  link_target: string;
  unique_clicks: number;
  total_clicks: number;
}

interface Snapshot {
  status: string;
  report: MailingResponse;
  links: LinkRow[];
}

const TOP_LINKS = 5;
const POLL_MS = 500;
const BAR = 30;

const fmt = thousands;

async function snapshot(api: Api, mailingId: number): Promise<Snapshot> {
  const [mailing, report, links] = await Promise.all([
    api.get<{ mailing_status: string }>(`/mailings/${mailingId}`),
    api.get<MailingResponse>(`/response/${mailingId}`),
    api.get<LinkRow[]>(`/response/${mailingId}/links`),
  ]);
  return {
    status: mailing.mailing_status,
    report,
    links: [...links].sort((a, b) => b.total_clicks - a.total_clicks || a.link_id - b.link_id).slice(0, TOP_LINKS),
  };
}

/** The stages a bar each, each of the stage before it. */
export function stages(r: MailingResponse) {
  return [
    { label: 'sent', value: r.sent, of: r.recipient_count || r.sent + r.in_progress },
    { label: 'delivered', value: r.delivered, of: r.sent },
    { label: 'opened', value: r.opened, of: r.delivered },
    { label: 'clicked', value: r.clicked_unique, of: r.opened },
  ];
}

/**
 * Draws a mailing's response on the terminal and redraws it as the send and the
 * engagement move, until Ctrl-C (or SIGINT), which ends it cleanly.
 */
export async function watchMailing(api: Api, mailingId: number, out: NodeJS.WriteStream): Promise<void> {
  // Held from the start: a Ctrl-C while Ink loads or the first figures arrive ends the view as cleanly as one later.
  let stopped = false;
  let unmount = () => undefined as void;
  const stop = () => {
    stopped = true;
    unmount();
  };
  // `on`, not `once`: Ink's exit hook re-raises a SIGINT that no other listener is left to handle.
  process.on('SIGINT', stop);
  try {
    await drawUntilStopped(
      api,
      mailingId,
      out,
      () => stopped,
      (fn) => (unmount = fn),
    );
  } finally {
    process.off('SIGINT', stop);
  }
}

async function drawUntilStopped(
  api: Api,
  mailingId: number,
  out: NodeJS.WriteStream,
  isStopped: () => boolean,
  onUnmount: (fn: () => void) => void,
) {
  const { render, Box, Text, React } = await loadInk();
  const h = React.createElement;
  const View = ({ s }: { s: Snapshot }) =>
    h(
      Box,
      { flexDirection: 'column' },
      h(Text, { bold: true }, `Mailing ${mailingId} "${s.report.name}"  status ${s.status}`),
      ...stages(s.report).map((st) => {
        const filled = st.of ? Math.min(BAR, Math.round((st.value / st.of) * BAR)) : 0;
        return h(
          Text,
          { key: st.label },
          `${st.label.padEnd(10)}[${'█'.repeat(filled)}${'░'.repeat(BAR - filled)}] ${fmt(st.value)} of ${fmt(st.of)} (${percent(st.value, st.of)})`,
        );
      }),
      h(
        Text,
        null,
        `in progress ${fmt(s.report.in_progress)}, bounced ${fmt(s.report.bounced)}, opted out ${fmt(s.report.opted_out)}, clicks ${fmt(s.report.clicked)}`,
      ),
      h(Text, { bold: true }, s.links.length ? 'Top links' : 'No links'),
      ...s.links.map((l) =>
        h(
          Text,
          { key: l.link_id },
          `  ${fmt(l.total_clicks).padStart(7)} clicks  ${fmt(l.unique_clicks).padStart(7)} unique  ${l.link_name}`,
        ),
      ),
      h(Text, { dimColor: true }, 'Ctrl-C to stop'),
    );
  let current = await snapshot(api, mailingId);
  if (isStopped()) return;
  const app = render(h(View, { s: current }), { stdout: out, patchConsole: false, exitOnCtrlC: true });
  let exited = false;
  const ended = app.waitUntilExit().then(
    () => (exited = true),
    () => (exited = true),
  );
  onUnmount(() => app.unmount());
  while (!isStopped() && !exited) {
    await Promise.race([new Promise((r) => setTimeout(r, POLL_MS)), ended]);
    if (isStopped() || exited) break;
    current = await snapshot(api, mailingId);
    if (!isStopped() && !exited) app.rerender(h(View, { s: current }));
  }
  app.unmount();
  await ended;
}
