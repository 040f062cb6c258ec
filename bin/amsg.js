#!/usr/bin/env node
// The executable shim. `--version` answers before anything else loads, so the
// cheapest call stays as cheap as starting node.
import { readFileSync } from 'node:fs';

const version = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;
const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  process.stdout.write(`${version}\n`);
} else {
  const { main } = await import('../dist/main.js');
  await main(process.argv, version);
}
