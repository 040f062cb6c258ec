import { setFlagsFromString } from 'node:v8';

// undici parses HTTP with llhttp compiled to WebAssembly. V8 compiles such a module
// twice, the second time (optimized) in the background, and a process cannot exit
// until that compilation ends: ~100 ms after a one-request command had its answer.
// The baseline compiler alone parses answers fast enough for a command line (an
// answer's body is passed through, not parsed), so the optimizing tier is left out:
// by remote commands (src/client/http-transport.ts) and by a local command's webhook
// posts (deliverFor in src/service/webhooks/deliver.ts).
// A module of its own, imported before undici: V8's flags are part of a code cache's
// check, so undici must be compiled under the flags its cache is written under.
setFlagsFromString('--liftoff-only');
