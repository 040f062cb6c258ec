import type * as InkReact from './ink-react.js';

type EsmImport = (url: string) => Promise<unknown>;
let esmImport: EsmImport | undefined;

/**
 * bin/amsg.js hands in its own import(): the CLI bundle runs compiled from V8's code
 * cache in a vm.Script (scripts/build.js), which cannot import an ES module itself.
 */
export function setEsmImport(load: EsmImport): void {
  esmImport = load;
}

/** Ink and React, for a live view on a terminal (never loaded otherwise). */
export function loadInk(): Promise<typeof InkReact> {
  if (!esmImport) return import('./ink-react.js');
  return esmImport(new URL('./ink-react.js', import.meta.url).href) as Promise<typeof InkReact>;
}
