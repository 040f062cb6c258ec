/**
 * SMS campaigns in a fixture, as mailings are: sent through the simulated sender
 * (the default without scheduled_at; the seed waits for the send to finish),
 * scheduled, or left a draft. Only a draft can change, so a campaign that exists
 * by name and has gone out is left as it is.
 */
import { allPages } from '../paging.js';
import { listedBy, namesAt, SeedError, type Kind, type SeedRun } from './kind.js';
import { memberIdByEmail } from './members.js';
import * as v from './shape.js';

const names = v.list(v.str());

const smsRecord = v.obj(
  {
    name: v.str({ max: 255 }),
    message: v.str({ max: 1600 }),
    from_phone_number: v.str({ max: 32 }),
    recipients: v.obj({ groups: names, members: v.list(v.email), segments: names, suppression_segments: names }),
    is_promotional: v.bool,
    is_test: v.bool,
    shorten_links: v.bool,
    media_url: v.str({ max: 2000, pattern: /^https?:\/\/\S+$/, hint: 'must be an http or https URL' }),
    status: v.oneOf(['sent', 'scheduled', 'draft'] as const),
    scheduled_at: v.str(),
  },
  ['name', 'message', 'from_phone_number'],
);
type SmsRecord = NonNullable<ReturnType<typeof smsRecord>>;
interface SmsRow {
  sms_campaign_id: number;
  sms_campaign_name: string;
  send_status: string;
  from_phone_number: string;
  message: string;
  recipients: { groups: number[]; members: number[]; segments: number[]; suppression_segments: number[] };
  is_promotional: boolean;
  is_test: boolean;
  shorten_links: boolean;
  media_url: string | null;
  results_message?: string | null;
}

const statusOf = (r: SmsRecord) => r.status ?? (r.scheduled_at ? 'scheduled' : 'sent');
/** As the service stores a phone number: + and digits. */
const compactPhone = (p: string) => p.replace(/[\s().-]/g, '').replace(/^00/, '+');

/** The recipients as the service takes them (a member the account had before the run is looked up if `existing` did not load it). */
async function recipients(run: SeedRun, r: SmsRecord) {
  const members: number[] = [];
  for (const email of r.recipients?.members ?? []) members.push(await memberIdByEmail(run, email));
  return { ...plannedRecipients(run, r), members };
}

/** The campaign's content as PATCH and POST take it. */
async function body(run: SeedRun, r: SmsRecord) {
  return {
    sms_campaign_name: r.name,
    message: r.message,
    from_phone_number: r.from_phone_number,
    recipients: await recipients(run, r),
    is_promotional: r.is_promotional,
    is_test: r.is_test,
    shorten_links: r.shorten_links,
    media_url: r.media_url,
    scheduled_at: statusOf(r) === 'scheduled' ? r.scheduled_at : undefined,
  };
}

/** Asks for the send (now or at scheduled_at); a send now is waited for. */
async function send(run: SeedRun, id: number, r: SmsRecord) {
  const status = statusOf(r);
  if (status === 'draft') return;
  await run.api.post(`/sms/campaigns/${id}/send`, {});
  if (status === 'sent') await waitForSend(run, id, r.name);
}

async function waitForSend(run: SeedRun, id: number, name: string) {
  const deadline = Date.now() + 10 * 60_000;
  for (let delay = 5; ; delay = Math.min(delay * 2, 200)) {
    const c = await run.api.get<SmsRow>(`/sms/campaigns/${id}`);
    if (c.send_status === 'c') return;
    if (c.send_status === 'f' || c.send_status === 'x')
      throw new SeedError(`SMS campaign "${name}" (${id}) did not send: ${c.results_message ?? `status ${c.send_status}`}`);
    if (Date.now() > deadline) throw new SeedError(`SMS campaign "${name}" (${id}) is still sending after 10 minutes`);
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}

export const smsCampaigns: Kind<SmsRecord, SmsRow> = {
  name: 'sms_campaigns',
  record: smsRecord,
  key: (r) => r.name,
  refs(r, path) {
    const at = `${path}.recipients`;
    return [
      ...namesAt('groups', r.recipients?.groups, `${at}.groups`),
      ...namesAt('members', r.recipients?.members, `${at}.members`),
      ...namesAt('searches', r.recipients?.segments, `${at}.segments`),
      ...namesAt('searches', r.recipients?.suppression_segments, `${at}.suppression_segments`),
    ];
  },
  check(_run, r, path) {
    const problems: [string, string][] = [];
    const status = statusOf(r);
    if (status === 'sent' && r.scheduled_at)
      problems.push([`${path}.scheduled_at`, 'a sent campaign has no scheduled_at (status: scheduled sends later)']);
    if (status === 'scheduled' && !r.scheduled_at) problems.push([`${path}.scheduled_at`, 'is required for a scheduled campaign']);
    if (status !== 'draft' && !r.recipients?.groups?.length && !r.recipients?.members?.length && !r.recipients?.segments?.length)
      problems.push([`${path}.recipients`, 'a campaign that is sent needs recipients (groups, members or segments)']);
    return problems;
  },
  existing: listedBy('/sms/campaigns', (c: SmsRow) => c.sms_campaign_name),
  idOf: (c) => c.sms_campaign_id,
  // Only a draft changes: its content, or its status when the file sends it.
  differs: (run, r, c) =>
    c.send_status === 'd' &&
    (statusOf(r) !== 'draft' ||
      r.message !== c.message ||
      compactPhone(r.from_phone_number) !== c.from_phone_number ||
      (r.is_promotional !== undefined && r.is_promotional !== c.is_promotional) ||
      (r.is_test !== undefined && r.is_test !== c.is_test) ||
      (r.shorten_links !== undefined && r.shorten_links !== c.shorten_links) ||
      (r.media_url !== undefined && r.media_url !== c.media_url) ||
      JSON.stringify(plannedRecipients(run, r)) !== JSON.stringify(c.recipients)),
  async create(run, r) {
    const id = await run.api.post<number>('/sms/campaigns', await body(run, r));
    await send(run, id, r);
    return id;
  },
  async update(run, r, c) {
    await run.api.patch(`/sms/campaigns/${c.sms_campaign_id}`, await body(run, r));
    await send(run, c.sms_campaign_id, r);
  },
};

/** Recipients as known without a request (a member the account has is compared by the id `existing` loaded). */
function plannedRecipients(run: SeedRun, r: SmsRecord) {
  const ids = (kind: string, list?: string[]) => (list ?? []).map((name) => run.id(kind, name));
  return {
    groups: ids('groups', r.recipients?.groups),
    members: ids('members', r.recipients?.members),
    segments: ids('searches', r.recipients?.segments),
    suppression_segments: ids('searches', r.recipients?.suppression_segments),
  };
}

/** Cancels what is not yet out, then archives every campaign (the service keeps sent ones). */
export async function resetSms(run: Pick<SeedRun, 'api'>): Promise<void> {
  const { api } = run;
  for (const c of await allPages<SmsRow>(api, '/sms/campaigns')) {
    if (c.send_status === 's' || c.send_status === 'p') await api.post(`/sms/campaigns/${c.sms_campaign_id}/cancel`, {});
    await api.delete(`/sms/campaigns/${c.sms_campaign_id}`);
  }
}
