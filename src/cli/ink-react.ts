// The live views' ES module (dist/ink-react.js): Ink and the one React that Ink and
// the views share. Loaded by loadInk (./ink.ts) only when a view is drawn on a terminal.
import React from 'react';

export { render, Box, Static, Text } from 'ink';
export { React };
