// htm bound to Preact: tagged templates instead of JSX, so the console needs no JSX step.
// htm/Preact put every interpolated value into the DOM as text or as a property, never as
// markup: data (member fields, mailing names, payloads) is escaped by construction.
import { h } from 'preact';
import htm from 'htm';

export const html = htm.bind(h);
