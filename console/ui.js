// Small building blocks every page uses: loading data, tables, confirmations, tabs.
import { createContext } from 'preact';
import { useContext, useEffect, useId, useMemo, useRef, useState } from 'preact/hooks';
import { html } from './html.js';

/**
 * Runs `load(signal)` when `deps` change and answers {data, error, loading, reload}. The
 * previous data stays while a reload runs, so live refreshes do not flash.
 */
/** The loads still running inside a Page: it counts as loaded once its own data and these are in. */
const PageLoads = createContext(null);

export function useApi(load, deps) {
  const [state, setState] = useState({ loading: true, data: undefined, error: null });
  const [tick, setTick] = useState(0);
  const loads = useContext(PageLoads);
  const token = useRef({});
  if (loads) {
    if (state.loading) loads.pending.add(token.current);
    else loads.pending.delete(token.current);
  }
  useEffect(() => {
    if (loads && !state.loading) loads.changed();
  }, [loads, state.loading]);
  useEffect(
    () => () => {
      loads?.pending.delete(token.current);
      loads?.changed();
    },
    [loads],
  );
  // biome-ignore lint/correctness/useExhaustiveDependencies: the caller names what the load depends on; tick is a reload
  useEffect(() => {
    const controller = new AbortController();
    setState((s) => ({ ...s, loading: true, error: null }));
    load(controller.signal).then(
      (data) => {
        if (!controller.signal.aborted) setState({ loading: false, data, error: null });
      },
      (error) => {
        if (!controller.signal.aborted && error?.name !== 'AbortError') setState({ loading: false, data: undefined, error });
      },
    );
    return () => controller.abort();
  }, [...deps, tick]);
  return { ...state, reload: () => setTick((t) => t + 1) };
}

/** A growing window over a list: `end` for the query, `grow()` for the next step. */
export function useMore(step = 50) {
  const [end, setEnd] = useState(step);
  return { end, grow: () => setEnd((e) => e + step) };
}

/** The button that grows a window, while the last answer filled it (there may be more). */
export function MoreButton({ window, shown, label = 'Show more' }) {
  return shown >= window.end ? html`<p><button type="button" onClick=${window.grow}>${label}</button></p>` : null;
}

/** Debounces a changing value: the value once it has not changed for `ms`. */
export function useDebounced(value, ms) {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return settled;
}

let firstPageShown = false;

/**
 * A page: its heading (focused after a navigation, so a screen reader announces it), the
 * document title, and the data-loaded marker tests and the bench wait for once its data shows.
 */
export function Page({ name, title, loaded, actions, children }) {
  const heading = useRef(null);
  const [, setChanges] = useState(0);
  const loads = useMemo(() => ({ pending: new Set(), changed: () => setChanges((n) => n + 1) }), []);
  // Loaded: the page's own data (`loaded`) and every section's load inside it.
  const [settled, setSettled] = useState(false);
  useEffect(() => setSettled(!!loaded && loads.pending.size === 0));
  useEffect(() => {
    document.title = `${title} · amsg console`;
  }, [title]);
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new page (name) takes the focus to its heading
  useEffect(() => {
    // Not on the first page of a load: there the skip link must stay the first stop of Tab.
    if (firstPageShown && (document.activeElement === document.body || document.activeElement?.closest('nav'))) heading.current?.focus();
    firstPageShown = true;
  }, [name]);
  useEffect(() => {
    // What bench/console.js reads: from the navigation's start to this page's data shown.
    if (settled && !performance.getEntriesByName('amsg:data-loaded').length) performance.mark('amsg:data-loaded', { detail: name });
  }, [settled, name]);
  return html`<${PageLoads.Provider} value=${loads}>
    <section class="page" data-page=${name} data-loaded=${settled ? 'true' : undefined} aria-busy=${settled ? 'false' : 'true'}>
      <header class="page-head">
        <h1 tabindex="-1" ref=${heading}>${title}</h1>
        ${actions ? html`<div class="actions">${actions}</div>` : null}
      </header>
      ${children}
    </section>
  </${PageLoads.Provider}>`;
}

export function Loading({ what = 'data' }) {
  return html`<p class="muted" role="status">Loading ${what}…</p>`;
}

/** A failed call: the service's own error text, and the status (404 reads as "not found"). */
export function ErrorBox({ error }) {
  if (!error) return null;
  const status = error.status;
  const label = status === 404 ? 'Not found' : status === 403 ? 'Not allowed' : status ? `Error ${status}` : 'Error';
  return html`<div class="error" role="alert" data-status=${status ?? ''}><strong>${label}:</strong> ${error.message}</div>`;
}

/**
 * A table. `columns`: [{key, label, render?(row), num?}]. `label` names it for assistive
 * technology; the wrapper scrolls sideways on narrow screens and can take focus to do so.
 */
export function Table({ label, columns, rows, empty = 'Nothing here yet.', rowKey }) {
  if (!rows?.length) return html`<p class="muted empty">${empty}</p>`;
  return html`<div class="table-wrap" tabindex="0" role="region" aria-label=${label}>
    <table>
      <caption class="visually-hidden">${label}</caption>
      <thead>
        <tr>
          ${columns.map((c) => html`<th scope="col" class=${c.num ? 'num' : ''}>${c.label}</th>`)}
        </tr>
      </thead>
      <tbody>
        ${rows.map(
          (row, i) =>
            html`<tr key=${rowKey ? rowKey(row) : i}>
              ${columns.map((c) => html`<td class=${c.num ? 'num' : ''}>${c.render ? c.render(row) : row[c.key]}</td>`)}
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

/** Label/value pairs as a description list. `items`: [[label, value], …]; empty values skipped. */
export function Facts({ items }) {
  return html`<dl class="facts">
    ${items
      .filter(([, v]) => v !== undefined && v !== null && v !== '')
      .map(([label, value]) => html`<div><dt>${label}</dt><dd>${value}</dd></div>`)}
  </dl>`;
}

/**
 * A button that asks first: a modal <dialog> naming what the write touches, then runs
 * `action()` and shows its outcome. The dialog traps focus and Escape closes it. `hidden`: the
 * write no longer applies (a canceled mailing): no button, but the last outcome stays shown.
 * `disabled`: the write cannot be asked yet (a form not filled in).
 */
export function ConfirmButton({ label, title, message, confirmLabel, action, onDone, danger = false, hidden = false, disabled = false }) {
  const dialog = useRef(null);
  const titleId = useId();
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState(null);
  const open = () => {
    setOutcome(null);
    dialog.current?.showModal();
  };
  const confirm = async (event) => {
    event.preventDefault();
    setBusy(true);
    try {
      const result = await action();
      dialog.current?.close();
      setOutcome({ ok: true, text: typeof result === 'string' ? result : 'Done.' });
      onDone?.(result);
    } catch (error) {
      setOutcome({ ok: false, text: error.message, status: error.status });
    } finally {
      setBusy(false);
    }
  };
  return html`<span class="confirm">
    ${hidden ? null : html`<button type="button" class=${danger ? 'danger' : ''} onClick=${open} disabled=${disabled}>${label}</button>`}
    <dialog ref=${dialog} aria-labelledby=${titleId}>
      <form method="dialog" onSubmit=${confirm}>
        <h2 id=${titleId}>${title ?? label}</h2>
        <p>${message}</p>
        ${outcome && !outcome.ok ? html`<p class="error" role="alert">${outcome.text}</p>` : null}
        <div class="dialog-buttons">
          <button type="button" onClick=${() => dialog.current?.close()}>Cancel</button>
          <button type="submit" class=${danger ? 'danger' : 'primary'} disabled=${busy}>${confirmLabel ?? label}</button>
        </div>
      </form>
    </dialog>
    ${outcome ? html`<span class=${outcome.ok ? 'ok' : 'error'} role="status" data-outcome=${outcome.ok ? 'ok' : 'error'} data-status=${outcome.status ?? ''}>${outcome.text}</span>` : null}
  </span>`;
}

/** Tabs as a row of toggle buttons (aria-pressed) over one panel: simple for keyboard and screen readers. */
export function Choice({ label, options, value, onChange }) {
  return html`<div class="choice" role="group" aria-label=${label}>
    ${options.map(
      ([key, text]) =>
        html`<button type="button" aria-pressed=${value === key ? 'true' : 'false'} onClick=${() => onChange(key)}>${text}</button>`,
    )}
  </div>`;
}

export function Section({ title, id, children }) {
  return html`<section class="card" aria-labelledby=${id}>
    <h2 id=${id}>${title}</h2>
    ${children}
  </section>`;
}
