// Charts drawn by uPlot (canvas). Each chart is a <figure> with a caption and, for assistive
// technology and for copying numbers, the same data as a table in a <details> below it.
// Colours come from the theme's CSS variables, so a chart follows light and dark.
import uPlot from 'uplot';
import { useEffect, useRef } from 'preact/hooks';
import { html } from './html.js';

const cssVar = (name) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();
const PALETTE = ['--series-1', '--series-2', '--series-3', '--series-4', '--series-5'];

function themeAxes(xValues) {
  const stroke = cssVar('--text-muted');
  const grid = { stroke: cssVar('--border'), width: 1 };
  const x = { stroke, grid, ticks: grid };
  if (xValues) x.values = xValues;
  // Counts: whole numbers only on the value axis.
  const y = {
    stroke,
    grid,
    ticks: grid,
    values: (_u, splits) => splits.map((v) => (Number.isInteger(v) ? v.toLocaleString('en-US') : '')),
  };
  return [x, y];
}

function useUplot(build, deps) {
  const box = useRef(null);
  useEffect(() => {
    const element = box.current;
    if (!element) return undefined;
    let plot = build(Math.max(280, element.clientWidth), element);
    const media = matchMedia('(prefers-color-scheme: dark)');
    // Redrawn on a theme change (colours) and on a resize (width).
    const redraw = () => {
      plot.destroy();
      plot = build(Math.max(280, element.clientWidth), element);
    };
    media.addEventListener('change', redraw);
    const observer = new ResizeObserver(() => {
      const width = Math.max(280, element.clientWidth);
      if (Math.abs(width - plot.width) > 4) plot.setSize({ width, height: plot.height });
    });
    observer.observe(element);
    return () => {
      media.removeEventListener('change', redraw);
      observer.disconnect();
      plot.destroy();
    };
    // biome-ignore lint/correctness/useExhaustiveDependencies: the caller names what the chart depends on
  }, deps);
  return box;
}

/**
 * Lines over time. `times`: seconds since the epoch; `series`: [{label, values}].
 */
export function TimeChart({ id, title, times, series, step = 60, deps }) {
  const box = useUplot(
    (width, element) =>
      new uPlot(
        {
          width,
          height: 220,
          scales: {
            // One bucket alone still gets a readable span (a bucket either side), not uPlot's years.
            x: { time: true, ...(times.length === 1 ? { range: [times[0] - step, times[0] + step] } : {}) },
            y: { range: (_u, _min, max) => [0, Math.max(1, Math.ceil(max * 1.1))] },
          },
          axes: themeAxes(),
          series: [
            {},
            ...series.map((s, i) => ({ label: s.label, stroke: cssVar(PALETTE[i % PALETTE.length]), width: 2, points: { show: true } })),
          ],
          legend: { show: true },
        },
        [times, ...series.map((s) => s.values)],
        element,
      ),
    deps,
  );
  return html`<figure class="chart" data-chart=${id} data-points=${times.length}>
    <figcaption id=${`${id}-caption`}>${title}</figcaption>
    <div ref=${box} class="chart-box" role="img" aria-labelledby=${`${id}-caption`}></div>
    <${DataTable}
      title=${title}
      head=${['Time (UTC)', ...series.map((s) => s.label)]}
      rows=${times.map((t, i) => [new Date(t * 1000).toISOString().slice(0, 16).replace('T', ' '), ...series.map((s) => s.values[i])])}
    />
  </figure>`;
}

/** Bars for named categories. `bars`: [{label, value}]. */
export function BarChart({ id, title, bars, unit = '' }) {
  const labels = bars.map((b) => b.label);
  const box = useUplot(
    (width, element) =>
      new uPlot(
        {
          width,
          height: 200,
          scales: { x: { time: false, range: [-0.6, bars.length - 0.4] }, y: { range: (_u, _min, max) => [0, Math.max(1, max * 1.1)] } },
          axes: themeAxes((_u, splits) => splits.map((v) => (Number.isInteger(v) ? (labels[v] ?? '') : ''))),
          series: [
            {},
            {
              label: unit || 'value',
              stroke: cssVar('--series-1'),
              fill: cssVar('--series-1'),
              paths: uPlot.paths.bars({ size: [0.6, 80] }),
              points: { show: false },
            },
          ],
          legend: { show: false },
        },
        [bars.map((_, i) => i), bars.map((b) => b.value)],
        element,
      ),
    [JSON.stringify(bars)],
  );
  return html`<figure class="chart" data-chart=${id} data-points=${bars.length}>
    <figcaption id=${`${id}-caption`}>${title}</figcaption>
    <div ref=${box} class="chart-box" role="img" aria-labelledby=${`${id}-caption`}></div>
    <${DataTable} title=${title} head=${['Item', unit || 'value']} rows=${bars.map((b) => [b.label, b.value])} />
  </figure>`;
}

function DataTable({ title, head, rows }) {
  return html`<details class="chart-data">
    <summary>${title}: the numbers</summary>
    <table>
      <thead><tr>${head.map((h) => html`<th scope="col">${h}</th>`)}</tr></thead>
      <tbody>${rows.map((r) => html`<tr>${r.map((v) => html`<td>${v}</td>`)}</tr>`)}</tbody>
    </table>
  </details>`;
}
