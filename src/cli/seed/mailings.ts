/**
 * Mailings in a fixture: drafts, scheduled ones, or sent through the simulated
 * sender (the seed waits for the send to finish), with engagement recorded by the
 * sim operations: the members named, or a share of the recipients drawn with a seed.
 * A mailing is matched on its name and, once there, left as it is: the service
 * does not change a mailing's content or audience after it is created.
 */
import { listedBy, namesAt, SeedError, type Kind, type SeedRun } from './kind.js';
import { memberIdByEmail } from './members.js';
import * as v from './shape.js';

const emails = v.list(v.email);
const names = v.list(v.str());
/** A list of members by e-mail, or the share of the recipients to draw: 0.4, or "40%" as `amsg sim mailing` takes it. */
const who: v.Shape<string[] | number> = (x, path, c) => {
  if (typeof x === 'string' && /^\d+(\.\d+)?%$/.test(x.trim())) return v.num({ min: 0, max: 1 })(Number.parseFloat(x) / 100, path, c);
  return typeof x === 'number' ? v.num({ min: 0, max: 1 })(x, path, c) : emails(x, path, c);
};
const ENGAGEMENT = ['opens', 'clicks', 'bounces', 'shares', 'optouts'] as const;
const SIM_KIND: Record<(typeof ENGAGEMENT)[number], string> = {
  opens: 'open',
  clicks: 'click',
  bounces: 'bounce',
  shares: 'share',
  optouts: 'optout',
};

const mailingRecord = v.obj(
  {
    name: v.str({ max: 255 }),
    subject: v.str({ max: 998 }),
    sender: v.str({ max: 255 }),
    reply_to: v.email,
    html_body: v.str({ min: 0 }),
    plaintext: v.str({ min: 0 }),
    plaintext_only: v.bool,
    mailing_type: v.oneOf(['m', 't'] as const),
    status: v.oneOf(['sent', 'scheduled', 'draft'] as const),
    send_at: v.str(),
    recipients: v.obj({ groups: names, subscriptions: names, searches: names, segments: names, emails }),
    suppressed: v.obj({ searches: names, segments: names, members: emails }),
    engagement: v.obj({ seed: v.num({ int: true }), opens: who, clicks: who, bounces: who, shares: who, optouts: who }),
  },
  ['name', 'subject', 'sender'],
);
type MailingRecord = NonNullable<ReturnType<typeof mailingRecord>>;
interface MailingRow {
  mailing_id: number;
  name: string;
  mailing_status: string;
  failure_message?: string | null;
}

const statusOf = (r: MailingRecord) => r.status ?? (r.send_at ? 'scheduled' : 'sent');

export const mailings: Kind<MailingRecord, MailingRow> = {
  name: 'mailings',
  record: mailingRecord,
  key: (r) => r.name,
  refs(r, path) {
    return [
      ...namesAt('groups', r.recipients?.groups, `${path}.recipients.groups`),
      ...namesAt('subscriptions', r.recipients?.subscriptions, `${path}.recipients.subscriptions`),
      ...namesAt('searches', r.recipients?.searches, `${path}.recipients.searches`),
      ...namesAt('searches', r.recipients?.segments, `${path}.recipients.segments`),
      ...namesAt('searches', r.suppressed?.searches, `${path}.suppressed.searches`),
      ...namesAt('searches', r.suppressed?.segments, `${path}.suppressed.segments`),
      ...namesAt('members', r.suppressed?.members, `${path}.suppressed.members`),
      ...ENGAGEMENT.flatMap((kind) => namesAt('members', r.engagement?.[kind], `${path}.engagement.${kind}`)),
    ];
  },
  check(_run, r, path) {
    const problems: [string, string][] = [];
    if (r.engagement && statusOf(r) !== 'sent') problems.push([`${path}.engagement`, 'only a sent mailing has engagement (status: sent)']);
    if (statusOf(r) === 'sent' && r.send_at)
      problems.push([`${path}.send_at`, 'a sent mailing has no send_at (status: scheduled sends later)']);
    if (statusOf(r) === 'scheduled' && !r.send_at) problems.push([`${path}.send_at`, 'is required for a scheduled mailing']);
    return problems;
  },
  existing: listedBy('/mailings', (m: MailingRow) => m.name, false),
  idOf: (m) => m.mailing_id,
  async create(run, r) {
    const { api } = run;
    const ids = (kind: string, list?: string[]) => list?.map((name) => run.id(kind, name)!);
    const status = statusOf(r);
    const { mailing_id } = await api.post<{ mailing_id: number }>('/mailings', {
      name: r.name,
      subject: r.subject,
      sender: r.sender,
      reply_to: r.reply_to,
      html_body: r.html_body,
      plaintext: r.plaintext,
      plaintext_only: r.plaintext_only,
      mailing_type: r.mailing_type,
      status: status === 'draft' ? 'u' : 'p',
      send_at: r.send_at,
      recipient_groups: ids('groups', r.recipients?.groups),
      recipient_subscriptions: ids('subscriptions', r.recipients?.subscriptions),
      recipient_searches: ids('searches', r.recipients?.searches),
      recipient_segments: ids('searches', r.recipients?.segments),
      recipient_emails: r.recipients?.emails,
      suppressed_searches: ids('searches', r.suppressed?.searches),
      suppressed_segments: ids('searches', r.suppressed?.segments),
      suppressed_member_ids: r.suppressed?.members && (await Promise.all(r.suppressed.members.map((e) => memberIdByEmail(run, e)))),
    });
    if (status === 'sent') {
      await waitForSend(run, mailing_id, r.name);
      if (r.engagement) await engage(run, mailing_id, r);
    }
    return mailing_id;
  },
};

/** Polls until the send is over (locally each call also runs the send; a server sends in the background). */
async function waitForSend(run: SeedRun, id: number, name: string) {
  const deadline = Date.now() + 10 * 60_000;
  for (let delay = 5; ; delay = Math.min(delay * 2, 200)) {
    const m = await run.api.get<MailingRow>(`/mailings/${id}`);
    if (m.mailing_status === 'c') return;
    if (m.mailing_status === 'f' || m.mailing_status === 'x')
      throw new SeedError(`mailing "${name}" (${id}) did not send: ${m.failure_message ?? `status ${m.mailing_status}`}`);
    if (Date.now() > deadline) throw new SeedError(`mailing "${name}" (${id}) is still sending after 10 minutes`);
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}

/**
 * Records the engagement of a sent mailing: the members named, one sim call each, and
 * the shares in one call of the service's whole-send simulation (POST
 * /sim/mailing/{id}), which draws from the mailing's own messages with the seed, so
 * any sent mailing (to groups, searches, segments, addresses) engages the same
 * members on every run over the same audience.
 */
async function engage(run: SeedRun, mailingId: number, r: MailingRecord) {
  const { api } = run;
  const e = r.engagement!;
  const shares: Record<string, number> = {};
  for (const kind of ENGAGEMENT) {
    const spec = e[kind];
    if (spec === undefined) continue;
    if (!Array.isArray(spec)) {
      shares[kind] = spec;
      continue;
    }
    for (const email of spec)
      await api.post(`/sim/${SIM_KIND[kind]}`, { mailing_id: mailingId, member_id: await memberIdByEmail(run, email) });
  }
  if (Object.keys(shares).length) await api.post(`/sim/mailing/${mailingId}`, { ...shares, seed: e.seed ?? 1 });
}
