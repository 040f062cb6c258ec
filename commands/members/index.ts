// `amsg members`: one module per verb or small family of verbs. The order of the calls
// is the order of the subcommands in the help and in `amsg completion`.
import type { Command } from 'commander';
import { registerWrites } from './add.js';
import { registerGroups } from './groups.js';
import { registerHistory } from './history.js';
import { registerImport } from './import.js';
import { registerImports } from './imports.js';
import { registerReads } from './list.js';
import { registerPurges } from './purge.js';
import { registerOptout, registerStatusChanges } from './status.js';

export function register(members: Command) {
  registerReads(members);
  registerWrites(members);
  registerOptout(members);
  registerHistory(members);
  registerStatusChanges(members);
  registerGroups(members);
  registerPurges(members);
  registerImport(members);
  registerImports(members);
}
