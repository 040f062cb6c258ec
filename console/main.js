// The console's entry: styles, link interception, and the app into <div id="app">.
import 'uplot/dist/uPlot.min.css';
import './console.css';
import { render } from 'preact';
import { html } from './html.js';
import { App } from './app.js';
import { interceptLinks } from './router.js';

interceptLinks();
render(html`<${App} />`, document.getElementById('app') ?? document.body);
