/**
 * How each resource's records show as a table, in one place: its columns, most
 * telling first; which of them identify a row (the id and the name or address:
 * never cut, never left out); which hold long free text (cut first); and the header
 * a person reads at a terminal (`Group`, `Active`). JSON and CSV keep the wire names.
 * Commands only name the table they print (`{ table: TABLES.members }`); output.ts
 * fits it to the terminal (see fitTable there).
 */

/** `id`: identifies a row, never cut nor left out. `free`: long free text, cut first. */
export type ColumnRole = 'id' | 'free';

export interface Column {
  /** The wire name; a dotted path reaches into an object (`parent_field.shortcut_name`). */
  key: string;
  /** The header a person reads. */
  label: string;
  role?: ColumnRole;
}

export interface TableSpec {
  readonly columns: readonly Column[];
}

const ID = 'id';
const FREE = 'free';

const table = (...columns: [key: string, label: string, role?: ColumnRole][]): TableSpec => ({
  columns: columns.map(([key, label, role]) => ({ key, label, role })),
});

/**
 * A header a person reads for a wire name no table names: `send_finished` → `Send
 * finished`, `member_id` → `Member ID`. A key that is not a wire name (a mailing's
 * name heading a comparison's column) stays as it is.
 */
export function humanLabel(key: string): string {
  if (!/^[a-z][a-z0-9_.]*$/.test(key)) return key;
  const words = key
    .split(/[._]/)
    .filter(Boolean)
    .map((w) => (w === 'id' ? 'ID' : w === 'ts' ? 'time' : w === 'num' ? 'number of' : w));
  const text = words.join(' ');
  return text ? text[0].toUpperCase() + text.slice(1) : key;
}

/** The table's column for a wire name (its label and role), or one labelled from the name. */
export function columnOf(spec: TableSpec | undefined, key: string): Column {
  return spec?.columns.find((c) => c.key === key) ?? { key, label: humanLabel(key) };
}

const MEMBER = table(
  ['member_id', 'ID', ID],
  ['email', 'Email', ID],
  ['status', 'Status'],
  ['fields', 'Fields', FREE],
  ['member_since', 'Member since'],
  ['last_modified_at', 'Modified'],
  ['deleted_at', 'Deleted'],
);

export const TABLES = {
  /** Members in any list: the audience, a group's, a search's, a mailing's; the columns a list lacks are not drawn. */
  members: MEMBER,
  /** A mailing's member lists in reports (sends, opens, opt-outs). */
  reportMembers: table(
    ['member_id', 'ID', ID],
    ['email', 'Email', ID],
    ['timestamp', 'When'],
    ['member_status_id', 'Status'],
    ['fields', 'Fields', FREE],
  ),
  reportClicks: table(['member_id', 'ID', ID], ['email', 'Email', ID], ['link_id', 'Link'], ['timestamp', 'When']),
  reportBounces: table(['member_id', 'ID', ID], ['email', 'Email', ID], ['delivery_type', 'Bounce'], ['timestamp', 'When']),
  reportForwards: table(['forward_mailing_id', 'Forward', ID], ['member_id', 'Member', ID], ['email', 'Email', ID], ['timestamp', 'When']),
  reportLinks: table(
    ['link_id', 'ID', ID],
    ['link_order', 'Order'],
    ['link_name', 'Link', ID],
    ['link_target', 'Target', FREE],
    ['unique_clicks', 'Unique clicks'],
    ['total_clicks', 'Clicks'],
  ),
  groups: table(
    ['member_group_id', 'ID', ID],
    ['group_name', 'Group', ID],
    ['group_type', 'Type'],
    ['active_count', 'Active'],
    ['error_count', 'Errors'],
    ['optout_count', 'Opted out'],
  ),
  mailings: table(
    ['mailing_id', 'ID', ID],
    ['name', 'Name', ID],
    ['mailing_status', 'Status'],
    ['mailing_type', 'Type'],
    ['subject', 'Subject', FREE],
    ['recipient_count', 'Recipients'],
    ['send_at', 'Send at'],
    ['send_finished', 'Finished'],
    ['archived_ts', 'Archived'],
  ),
  /** A member's mailing history (`members mailings`): which mailing each row is, then what the member did. */
  memberMailings: table(
    ['mailing_id', 'Mailing', ID],
    ['name', 'Name', ID],
    ['subject', 'Subject', FREE],
    ['sent', 'Sent'],
    ['delivery_type', 'Format'],
    ['opened', 'Opened'],
    ['clicked', 'Clicked'],
    ['forwarded', 'Forwarded'],
    ['shared', 'Shared'],
  ),
  memberOptouts: table(['timestamp', 'Opted out', ID], ['mailing_id', 'Mailing']),
  imports: table(
    ['import_id', 'ID', ID],
    ['status', 'Status'],
    ['source_filename', 'File', ID],
    ['num_members', 'Rows'],
    ['num_members_added', 'Added'],
    ['num_members_updated', 'Updated'],
    ['num_duplicates', 'Duplicates'],
    ['num_skipped', 'Skipped'],
    ['num_errors', 'Errors'],
    ['import_started', 'Started'],
    ['import_finished', 'Finished'],
  ),
  triggers: table(
    ['trigger_id', 'ID', ID],
    ['name', 'Name', ID],
    ['event_type', 'Event'],
    ['field_id', 'Field'],
    ['parent_mailing_id', 'Mailing'],
    ['push_offset_units', 'Offset'],
    ['start_ts', 'Starts'],
    ['is_disabled', 'Disabled'],
  ),
  searches: table(
    ['search_id', 'ID', ID],
    ['name', 'Name', ID],
    ['active_count', 'Active'],
    ['error_count', 'Errors'],
    ['optout_count', 'Opted out'],
    ['last_run_at', 'Last run'],
    ['criteria', 'Criteria', FREE],
  ),
  segments: table(
    ['segment_id', 'ID', ID],
    ['name', 'Name', ID],
    ['active_count', 'Active'],
    ['error_count', 'Errors'],
    ['optout_count', 'Opted out'],
  ),
  subscriptions: table(
    ['subscription_id', 'ID', ID],
    ['subscription_name', 'Subscription', ID],
    ['description', 'Description', FREE],
    ['member_count', 'Members'],
    ['optout_count', 'Opted out'],
    ['subscription_order', 'Order'],
    ['created_at', 'Created'],
    ['deleted_at', 'Deleted'],
  ),
  fields: table(
    ['field_id', 'ID', ID],
    ['shortcut_name', 'Field', ID],
    ['display_name', 'Display name'],
    ['field_type', 'Type'],
    ['widget_type', 'Widget'],
    ['options', 'Options', FREE],
    ['column_order', 'Order'],
  ),
  fieldRelationships: table(
    ['relationship_id', 'ID', ID],
    ['relationship_name', 'Name', ID],
    ['parent_field.shortcut_name', 'Parent field'],
    ['child_field.shortcut_name', 'Child field'],
    ['options', 'Options', FREE],
    ['created_at', 'Created'],
  ),
  keys: table(
    ['key_id', 'ID', ID],
    ['user_id', 'User'],
    ['user_email', 'User e-mail'],
    ['public_key', 'Public key', ID],
    ['label', 'Label', FREE],
    ['created_at', 'Created'],
    ['revoked_at', 'Revoked'],
  ),
  exports: table(
    ['export_id', 'ID', ID],
    ['export_type', 'Type'],
    ['status', 'Status'],
    ['export_name', 'Name', ID],
    ['user_id', 'User'],
    ['created_at', 'Created'],
    ['completed_at', 'Completed'],
  ),
  subaccounts: table(['account_id', 'ID', ID], ['account_name', 'Account', ID], ['account_status', 'Status']),
  webhooks: table(
    ['webhook_id', 'ID', ID],
    ['event', 'Event', ID],
    ['method', 'Method'],
    ['url', 'URL', FREE],
    ['public_key', 'Public key'],
  ),
  webhookDeliveries: table(
    ['delivery_id', 'ID', ID],
    ['webhook_id', 'Webhook'],
    ['event_id', 'Event ID'],
    ['event', 'Event', ID],
    ['status', 'Status'],
    ['attempts', 'Attempts'],
    ['last_status_code', 'Last code'],
    ['next_attempt_at', 'Next attempt'],
    ['last_error', 'Last error', FREE],
  ),
  workflows: table(
    ['workflow_id', 'ID', ID],
    ['name', 'Name', ID],
    ['match', 'Match', FREE],
    ['actions', 'Actions', FREE],
    ['run_count', 'Runs'],
    ['modified_at', 'Modified'],
  ),
  workflowRuns: table(
    ['run_id', 'ID', ID],
    ['inbound_id', 'Inbound'],
    ['member_id', 'Member'],
    ['ran_at', 'Ran at'],
    ['actions', 'Actions', FREE],
  ),
  inboundEvents: table(
    ['inbound_id', 'ID', ID],
    ['email', 'Email', ID],
    ['received_at', 'Received'],
    ['status', 'Status'],
    ['outcome', 'Outcome'],
    ['member_id', 'Member'],
    ['workflow_ids', 'Workflows'],
  ),
  smsCampaigns: table(
    ['sms_campaign_id', 'ID', ID],
    ['sms_campaign_name', 'Campaign', ID],
    ['send_status', 'Status'],
    ['is_promotional', 'Promotional'],
    ['total_sent', 'Sent'],
    ['deliveries', 'Delivered'],
    ['bounces', 'Bounced'],
    ['message_segments', 'Segments'],
    ['scheduled_at', 'Scheduled'],
    ['send_finished', 'Finished'],
  ),
  smsDeliveries: table(
    ['member_id', 'Member', ID],
    ['delivery_type', 'Delivery'],
    ['bounce_type', 'Bounce'],
    ['to_phone_number', 'Phone', ID],
    ['opted_out_at', 'Opted out'],
  ),
  smsClicks: table(
    ['member_id', 'Member', ID],
    ['sms_link_id', 'Link'],
    ['sms_link_target', 'Target', FREE],
    ['to_phone_number', 'Phone'],
    ['click_timestamp', 'When'],
  ),
} satisfies Record<string, TableSpec>;

/**
 * The tables of a kind of member event (events, touchpoints), whose names differ by
 * kind: the type catalogue and the records of a member.
 */
export function eventTables(k: { typeId: string; typeName: string; recordId: string; prefix: string }) {
  return {
    types: table([k.typeId, 'ID', ID], [k.typeName, 'Type', ID], ['display_name', 'Display name'], ['created_at', 'Created']),
    records: table(
      [k.recordId, 'ID', ID],
      ['member_id', 'Member'],
      [k.typeId, 'Type'],
      [`${k.prefix}_monetary_value`, 'Value'],
      [`${k.prefix}_timestamp`, 'When'],
      ['mailing_id', 'Mailing'],
      ['attributes', 'Attributes', FREE],
    ),
  };
}
