// `amsg mailings`: one module per verb or small family of verbs. The order of the calls
// is the order of the subcommands in the help and in `amsg completion`.
import type { Command } from 'commander';
import { registerAudience } from './audience.js';
import { registerCreate } from './create.js';
import { registerGet, registerList } from './list.js';
import { registerMessage } from './message.js';
import { registerForward, registerResend } from './resend.js';
import { registerStatusChanges } from './status.js';
import { registerTest } from './test.js';
import { registerValidate } from './validate.js';
import { registerWinner } from './winner.js';

export function register(mailings: Command) {
  registerList(mailings);
  registerGet(mailings);
  registerCreate(mailings);
  registerStatusChanges(mailings);
  registerResend(mailings);
  registerForward(mailings);
  registerValidate(mailings);
  registerMessage(mailings);
  registerWinner(mailings);
  registerAudience(mailings);
  registerTest(mailings);
}
