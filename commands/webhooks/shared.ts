// What the webhook verbs share.
import { UsageError } from '../../src/cli/context.js';

export const numeric = (what: string, ref: string) => {
  if (!/^\d+$/.test(ref)) throw new UsageError(`${what} is a numeric id, got "${ref}"`);
  return Number(ref);
};
