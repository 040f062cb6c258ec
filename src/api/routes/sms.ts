import * as s from '../schema.js';
import { invalid, type Schema } from '../schema.js';
import { route } from '../route.js';
import { listParams, windowedList } from './lists.js';
import * as enc from '../sms-encode.js';
import * as campaigns from '../../service/sms/campaigns.js';
import * as sending from '../../service/sms/sending.js';
import * as settings from '../../service/sms/settings.js';
import * as engagement from '../../service/sms/engagement.js';
import { getMemberByEmail } from '../../service/audience/members.js';
import type { Ctx } from '../../service/context.js';

const campaignId = s.object({ campaign_id: s.idText() });
const ids = () => s.optional(s.array(s.id()));

/** A UTC calendar day, `YYYY-MM-DD` (2026-13-01 and 2026-02-30 are refused). */
const day = (): Schema<string> => ({
  json: () => ({ type: 'string', format: 'date' }),
  parse(v, path) {
    if (typeof v !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(v))
      throw invalid(path, `must be a date such as 2026-11-01 (YYYY-MM-DD, UTC), got ${s.preview(v)}`);
    const date = new Date(`${v}T00:00:00Z`);
    if (Number.isNaN(date.getTime()) || date.toISOString().slice(0, 10) !== v) throw invalid(path, `${v} is not a calendar date`);
    return v;
  },
});

const recipients = s.object({
  groups: ids(),
  members: ids(),
  segments: ids(),
  suppression_segments: ids(),
});

const campaignFields = {
  sms_campaign_name: s.string({ min: 1, max: 255 }),
  message: s.string({ min: 1, max: campaigns.MAX_MESSAGE_LENGTH, pattern: /\S/, hint: 'must not be blank' }),
  from_phone_number: s.string({ min: 1, max: 32 }),
  recipients: s.optional(recipients),
  is_promotional: s.optional(s.boolean()),
  is_test: s.optional(s.boolean()),
  shorten_links: s.optional(s.boolean()),
  media_url: s.optional(s.nullable(s.string({ max: 2000, pattern: /^https?:\/\/\S+$/, hint: 'must be an http or https URL' }))),
  scheduled_at: s.optional(s.nullable(s.dateTime())),
};

/**
 * The member a simulated click or reply on a campaign comes from: member_id, or email.
 * The campaign is looked up first, so another account's campaign is a 404 whatever the body.
 */
const memberOf = (ctx: Ctx, campaignId: number, body: { member_id?: number; email?: string }) => {
  campaigns.campaignRow(ctx, campaignId);
  if ((body.member_id === undefined) === (body.email === undefined))
    throw invalid('member_id', 'give the member as member_id or as email (one of them)');
  return body.member_id ?? getMemberByEmail(ctx, body.email!).member_id;
};

export const smsRoutes = [
  route({
    op: 'sms.campaigns.list',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/sms/campaigns',
    summary: 'SMS campaigns in id order (archived ones with include_archived)',
    query: s.object({ ...listParams, include_archived: s.optional(s.flag()) }),
    returns: 'array of SMS campaign, or an integer with count=true',
    handler: ({ ctx, query }) =>
      query.count
        ? campaigns.countCampaigns(ctx, query.include_archived)
        : campaigns.listCampaigns(ctx, { ...query, includeArchived: query.include_archived }).map(enc.campaign),
  }),
  route({
    op: 'sms.campaigns.create',
    access: 'user',
    method: 'POST',
    path: '/{account_id}/sms/campaigns',
    summary: 'Create an SMS campaign as a draft (send it with POST …/send)',
    extension: true,
    body: s.object(campaignFields),
    returns: 'integer (sms_campaign_id)',
    handler: ({ ctx, body }) => campaigns.createCampaign(ctx, body),
  }),
  route({
    op: 'sms.campaigns.get',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/sms/campaigns/{campaign_id}',
    summary: 'One SMS campaign',
    params: campaignId,
    returns: 'SMS campaign',
    handler: ({ ctx, params }) => enc.campaign(campaigns.campaignRow(ctx, params.campaign_id)),
  }),
  route({
    op: 'sms.campaigns.update',
    access: 'user',
    method: 'PATCH',
    path: '/{account_id}/sms/campaigns/{campaign_id}',
    summary: 'Change a draft SMS campaign (a recipients object replaces the whole audience)',
    extension: true,
    params: campaignId,
    body: s.object({
      ...campaignFields,
      sms_campaign_name: s.optional(campaignFields.sms_campaign_name),
      message: s.optional(campaignFields.message),
      from_phone_number: s.optional(campaignFields.from_phone_number),
    }),
    returns: 'true',
    handler: ({ ctx, params, body }) => campaigns.updateCampaign(ctx, params.campaign_id, body),
  }),
  route({
    op: 'sms.campaigns.archive',
    access: 'user',
    method: 'DELETE',
    path: '/{account_id}/sms/campaigns/{campaign_id}',
    summary: 'Archive an SMS campaign (archived_at; it leaves the list)',
    extension: true,
    params: campaignId,
    returns: 'true',
    handler: ({ ctx, params }) => campaigns.archiveCampaign(ctx, params.campaign_id),
  }),
  route({
    op: 'sms.campaigns.send',
    access: 'user',
    method: 'POST',
    path: '/{account_id}/sms/campaigns/{campaign_id}/send',
    summary: 'Send a draft now, or at scheduled_at (given here or on the campaign)',
    extension: true,
    params: campaignId,
    body: s.object({ scheduled_at: s.optional(s.nullable(s.dateTime())) }),
    returns: 'true',
    handler: ({ ctx, params, body }) => sending.sendCampaign(ctx, params.campaign_id, body),
  }),
  route({
    op: 'sms.campaigns.cancel',
    access: 'user',
    method: 'POST',
    path: '/{account_id}/sms/campaigns/{campaign_id}/cancel',
    summary: 'Cancel a draft, scheduled or pending SMS campaign (403 once it started)',
    extension: true,
    params: campaignId,
    returns: 'true',
    handler: ({ ctx, params }) => campaigns.cancelCampaign(ctx, params.campaign_id),
  }),
  route({
    op: 'sms.campaigns.copy',
    access: 'user',
    method: 'POST',
    path: '/{account_id}/sms/campaigns/{campaign_id}/copy',
    summary: 'Copy an SMS campaign into a new draft (copied_from_sms_campaign_id names the original)',
    extension: true,
    params: campaignId,
    body: s.object({ sms_campaign_name: s.optional(campaignFields.sms_campaign_name) }),
    returns: 'integer (sms_campaign_id of the copy)',
    handler: ({ ctx, params, body }) => campaigns.copyCampaign(ctx, params.campaign_id, body),
  }),
  route({
    op: 'sms.campaigns.preview',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/sms/campaigns/{campaign_id}/preview',
    summary:
      "A campaign's message as a phone shows it, with its encoding and segments: as sent (links shortened) once sent, as written before; tags rendered for member_id or for nobody",
    extension: true,
    params: campaignId,
    query: s.object({ member_id: s.optional(s.idText()) }),
    returns: '{encoding, characters, units, segments, per_segment, non_gsm_characters, message}',
    handler: ({ ctx, params, query }) => {
      const campaign = campaigns.campaignRow(ctx, params.campaign_id);
      return sending.previewMessage(ctx, campaign.sent_message ?? campaign.message, query.member_id);
    },
  }),
  windowedList({
    op: 'sms.campaigns.deliveries',
    path: '/{account_id}/sms/campaigns/{campaign_id}/deliveries',
    id: 'campaign_id',
    summary: "A campaign's deliveries, in member id order",
    item: 'SMS delivery',
    list: campaigns.listDeliveries,
    count: campaigns.countDeliveries,
    encode: enc.delivery,
  }),
  windowedList({
    op: 'sms.campaigns.clicks',
    path: '/{account_id}/sms/campaigns/{campaign_id}/clicks',
    id: 'campaign_id',
    summary: "A campaign's clicks, in the order they came",
    item: 'SMS click',
    list: campaigns.listClicks,
    count: campaigns.countClicks,
    encode: enc.click,
  }),
  route({
    op: 'sms.creditUsage',
    access: 'user',
    method: 'GET',
    path: '/{account_id}/sms/billing/credit_usage',
    summary: 'Segments sent from from_date (inclusive) to to_date (exclusive), UTC days',
    query: s.object({ from_date: day(), to_date: day() }),
    returns: 'integer',
    handler: ({ ctx, query }) => campaigns.creditUsage(ctx, query.from_date, query.to_date),
  }),
  route({
    op: 'sms.settings.get',
    access: 'billing',
    method: 'GET',
    path: '/{account_id}/accounts/sms_settings',
    summary: "The account's SMS settings (billing access)",
    returns: 'SMS account settings',
    handler: ({ ctx }) => settings.getSettings(ctx),
  }),
  route({
    op: 'sms.settings.update',
    access: 'billing',
    method: 'PATCH',
    path: '/{account_id}/accounts/sms_settings',
    summary: "Change the account's SMS settings (billing access)",
    // Strict: the spec answers 400 for unknown field names here, where every other body ignores them.
    body: s.object(
      {
        sub_message_segment_limit: s.optional(s.int({ min: 0 })),
        sub_message_segment_limit_visible: s.optional(s.boolean()),
      },
      { strict: true },
    ),
    returns: 'SMS account settings',
    handler: ({ ctx, body }) => settings.updateSettings(ctx, body),
  }),
  route({
    op: 'sms.count',
    access: 'user',
    method: 'POST',
    path: '/{account_id}/sms/count',
    summary: "A message's encoding and segments (tags rendered for member_id, or with no member)",
    extension: true,
    body: s.object({ message: s.string({ max: campaigns.MAX_MESSAGE_LENGTH }), member_id: s.optional(s.id()) }),
    returns: '{encoding, characters, units, segments, per_segment, non_gsm_characters, message}',
    handler: ({ ctx, body }) => sending.previewMessage(ctx, body.message, body.member_id),
  }),

  // ---------------------------------------------------------------- simulation

  route({
    op: 'sms.sim.click',
    access: 'user',
    method: 'POST',
    path: '/{account_id}/sms/campaigns/{campaign_id}/sim/click',
    summary: 'Simulate a click on a short link of a delivered SMS (the first link by default)',
    extension: true,
    params: campaignId,
    body: s.object({ member_id: s.optional(s.id()), email: s.optional(s.email()), sms_link_id: s.optional(s.id()) }),
    returns: 'true',
    handler: ({ ctx, params, body }) =>
      engagement.recordClick(ctx, params.campaign_id, memberOf(ctx, params.campaign_id, body), body.sms_link_id),
  }),
  route({
    op: 'sms.sim.reply',
    access: 'user',
    method: 'POST',
    path: '/{account_id}/sms/campaigns/{campaign_id}/sim/reply',
    summary: 'Simulate a reply to a delivered SMS: STOP opts the member out of promotional SMS, START back in',
    extension: true,
    params: campaignId,
    body: s.object({ member_id: s.optional(s.id()), email: s.optional(s.email()), text: s.string({ min: 1, max: 160 }) }),
    returns: 'true',
    handler: ({ ctx, params, body }) => engagement.recordReply(ctx, params.campaign_id, memberOf(ctx, params.campaign_id, body), body.text),
  }),
];
