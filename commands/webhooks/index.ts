// `amsg webhooks`: one module per verb or small family of verbs. The order of the calls
// is the order of the subcommands in the help and in `amsg completion`.
import type { Command } from 'commander';
import { registerDeliveries } from './deliveries.js';
import { registerListen } from './listen.js';
import { registerManage } from './manage.js';

export function register(webhooks: Command) {
  webhooks.addHelpText(
    'after',
    `
A webhook is a URL that gets one event type, signed (x-amsg-signature: t=…,v1=… HMAC-SHA256 of
"t.body" keyed with its secret; docs/guide/webhooks.md has a verifier). Deliveries are retried 8 times over about
a day; each delivery is in the log (deliveries) and can be sent again (replay).
`,
  );

  registerManage(webhooks);
  registerDeliveries(webhooks);
  registerListen(webhooks);
}
