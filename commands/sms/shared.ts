// What the SMS campaign verbs share: the columns of a campaign, and the flags of create
// and update as the service's body.
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { Api } from '../../src/client/api.js';
import { UsageError, type RunContext } from '../../src/cli/context.js';
import { collectList, groupIds, memberId, searchId } from '../../src/cli/resolve.js';

export interface CampaignFlags {
  name?: string;
  message?: string;
  messageFile?: string;
  from?: string;
  group?: string[];
  member?: string[];
  segment?: string[];
  suppressSegment?: string[];
  promotional?: boolean;
  test?: boolean;
  shortenLinks?: boolean;
  mediaUrl?: string;
  at?: string;
}

export const campaignOptions = (cmd: Command) =>
  cmd
    .option('--name <name>', 'the campaign name')
    .option('--message <text>', 'the message; personalization tags such as [% member:first_name %] are rendered per member')
    .option('--message-file <file>', 'read the message from a file (- for stdin)')
    .option('--from <phone>', 'the number it is sent from, in international form (+15555550100)')
    .option('--group <name|id>', 'send to the members of this group (repeatable, or a comma list)', collectList)
    .option('--member <id|email>', 'send to this member (repeatable, or a comma list)', collectList)
    .option('--segment <name|id>', 'send to the members of this segment (a saved search; repeatable)', collectList)
    .option('--suppress-segment <name|id>', 'keep the members of this segment out (repeatable)', collectList)
    .option('--promotional', 'a promotional message: only members whose promotional status allows it')
    .option('--no-promotional', 'a transactional message')
    .option('--test', 'mark the campaign as a test')
    .option('--no-test', 'not a test')
    .option('--shorten-links', 'rewrite each URL of the message to a short link whose clicks are counted')
    .option('--no-shorten-links', 'send URLs as written')
    .option('--media-url <url>', 'an image or other media to send with it (MMS)')
    .option('--at <datetime>', 'when to send it, e.g. 2026-12-01T09:00:00Z (UTC when no offset is given)');

function messageOf(o: CampaignFlags): string | undefined {
  if (o.message !== undefined && o.messageFile !== undefined) throw new UsageError('give --message or --message-file, not both');
  if (o.messageFile === undefined) return o.message;
  try {
    return readFileSync(o.messageFile === '-' ? 0 : o.messageFile, 'utf8').replace(/\r?\n$/, '');
  } catch (err) {
    throw new UsageError(`--message-file: cannot read ${o.messageFile}: ${(err as Error).message}`);
  }
}

/** The audience flags as the service's recipients object, or undefined when none was given. */
async function recipientsOf(api: Api, ctx: RunContext, o: CampaignFlags) {
  if (!o.group && !o.member && !o.segment && !o.suppressSegment) return undefined;
  const segments = (refs: string[] = []) => Promise.all(refs.map((r) => searchId(api, r)));
  return {
    groups: await groupIds(api, ctx, o.group ?? []),
    members: await Promise.all((o.member ?? []).map((r) => memberId(api, r, false))),
    segments: await segments(o.segment),
    suppression_segments: await segments(o.suppressSegment),
  };
}

export async function bodyOf(api: Api, ctx: RunContext, o: CampaignFlags) {
  return {
    sms_campaign_name: o.name,
    message: messageOf(o),
    from_phone_number: o.from,
    recipients: await recipientsOf(api, ctx, o),
    is_promotional: o.promotional,
    is_test: o.test,
    shorten_links: o.shortenLinks,
    media_url: o.mediaUrl,
    scheduled_at: o.at,
  };
}
