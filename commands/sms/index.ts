// `amsg sms`: one module per verb or small family of verbs. The order of the calls
// is the order of the subcommands in the help and in `amsg completion`.
import type { Command } from 'commander';
import { registerCampaigns } from './campaigns.js';
import { registerCount } from './count.js';
import { registerSettings } from './settings.js';
import { registerUsage } from './usage.js';

export function register(sms: Command) {
  registerCampaigns(sms.command('campaigns').description('SMS campaigns: create, update, send, cancel, archive, copy, deliveries, clicks'));
  registerUsage(sms);
  registerSettings(sms);
  registerCount(sms);
}
