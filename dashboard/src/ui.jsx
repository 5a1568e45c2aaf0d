// Small shared pieces: figures, tables, notes, action buttons, a chart.

import { useEffect, useErrorBoundary, useRef, useState } from "preact/hooks";
import uPlot from "uplot";

export function num(n) {
  if (n === null || n === undefined || n === "") return "–";
  const v = Number(n);
  return Number.isFinite(v) ? v.toLocaleString("en-US", { maximumFractionDigits: 2 }) : String(n);
}

export function bytes(n) {
  const v = Number(n);
  if (!Number.isFinite(v)) return "–";
  const units = ["B", "kB", "MB", "GB", "TB"];
  let i = 0;
  let x = v;
  while (x >= 1024 && i < units.length - 1) {
    x /= 1024;
    i++;
  }
  return `${x.toLocaleString("en-US", { maximumFractionDigits: i ? 1 : 0 })} ${units[i]}`;
}

export function when(t) {
  if (!t) return "–";
  const d = new Date(t);
  if (Number.isNaN(d.getTime())) return String(t);
  const s = Math.round((Date.now() - d.getTime()) / 1000);
  const ago = Math.abs(s);
  const text =
    ago < 60 ? `${ago} s` : ago < 3600 ? `${Math.round(ago / 60)} min` : ago < 86400 ? `${Math.round(ago / 3600)} h` : `${Math.round(ago / 86400)} d`;
  return s >= 0 ? `${text} ago` : `in ${text}`;
}

export function stamp(t) {
  if (!t) return "–";
  const d = new Date(t);
  return Number.isNaN(d.getTime()) ? String(t) : d.toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z");
}

export function Note({ error, children }) {
  if (error) {
    return (
      <p class="note error">
        {error.status === 503 || error.status === 0
          ? `The database is not answering: ${error.message}`
          : `${error.message}${error.code && error.code !== "error" ? ` (${error.code})` : ""}`}
      </p>
    );
  }
  return children ? <p class="note">{children}</p> : null;
}

export function Loading({ poll }) {
  if (poll.error) return <Note error={poll.error} />;
  if (!poll.loaded) return <p class="note">Loading…</p>;
  return null;
}

// `view` with, above it, the error of a later call of `poll` that failed:
// old figures never pass for current ones.
export function withStale(poll, view) {
  if (!poll.error) return view;
  return (
    <>
      <Note error={{ ...poll.error, message: `${poll.error.message}; showing the last answer` }} />
      {view}
    </>
  );
}

// One figure of a row of cards.
export function Card({ label, value, bad }) {
  return (
    <div class={`card${bad ? " bad" : ""}`}>
      <div class="label">{label}</div>
      <div class="value">{value}</div>
    </div>
  );
}

// A table: `columns` [{ label, cell(row), num? }], `rows`, `empty` text.
export function Table({ caption, columns, rows, empty = "Nothing here.", rowKey }) {
  if (!rows || rows.length === 0) return <p class="note empty">{empty}</p>;
  return (
    <div class="scroll">
      <table role="table">
        {caption && <caption>{caption}</caption>}
        <thead>
          <tr role="row">
            {columns.map((c) => (
              <th scope="col" role="columnheader" class={c.num ? "num" : ""}>
                {c.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((r, i) => (
            <tr role="row" key={rowKey ? rowKey(r) : i}>
              {columns.map((c) => (
                <td role="cell" class={c.num ? "num" : ""} data-label={c.label}>
                  {c.cell(r)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

// A button that runs `action`, shows it is busy, and reports its error.
export function Action({ label, action, confirm, danger, onDone, disabled, name }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const run = async () => {
    if (confirm && !window.confirm(confirm)) return;
    setBusy(true);
    setError(null);
    try {
      const result = await action();
      if (onDone) onDone(result);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <span class="action">
      <button type="button" class={danger ? "danger" : ""} disabled={busy || disabled} aria-busy={busy ? "true" : undefined} aria-label={name} onClick={run}>
        {label}
      </button>
      {error && (
        <span class="error" role="alert">
          {error.message}
        </span>
      )}
    </span>
  );
}

// A line chart: `series` [{ label, values }] over `times` (seconds).
// `span` [from, to] (seconds) fixes the time axis, so a series of few
// points still reads as the window it covers.
export function Chart({ title, times, series, span, height = 180 }) {
  const box = useRef(null);
  const plot = useRef(null);
  const spanRef = useRef(span);
  spanRef.current = span;
  useEffect(() => {
    if (!box.current) return undefined;
    const colors = ["#2563eb", "#16a34a", "#dc2626", "#9333ea"];
    const opts = {
      width: Math.max(240, box.current.clientWidth),
      height,
      legend: { show: true },
      scales: { x: { time: true, range: (u, min, max) => spanRef.current || [min, max] } },
      axes: [{}, { size: 60 }],
      series: [{}, ...series.map((s, i) => ({ label: s.label, stroke: colors[i % colors.length], width: 1.5, points: { show: times.length < 40 } }))],
    };
    const data = [times, ...series.map((s) => s.values)];
    plot.current = new uPlot(opts, data, box.current);
    const resize = new ResizeObserver(() => {
      if (plot.current && box.current) plot.current.setSize({ width: Math.max(240, box.current.clientWidth), height });
    });
    resize.observe(box.current);
    return () => {
      resize.disconnect();
      plot.current.destroy();
      plot.current = null;
    };
  }, [series.length, height]);
  useEffect(() => {
    if (plot.current) plot.current.setData([times, ...series.map((s) => s.values)]);
  }, [times, series]);
  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      <div ref={box} role="img" aria-label={title} />
    </figure>
  );
}

// A page that fails to draw says so, and the rest of the dashboard goes on;
// the error still goes to the console.
export function Guard({ children }) {
  const [error, reset] = useErrorBoundary((e) => console.error("the page failed to draw:", e));
  if (error) {
    return (
      <p class="note error" role="alert">
        This page failed to draw: {String((error && error.message) || error)}{" "}
        <button type="button" onClick={reset}>
          Try again
        </button>
      </p>
    );
  }
  return children;
}

// A labelled input of a filter form: `value` and `set` are the field's
// draft and its setter.
export function Field({ id, label, type = "text", value, set, required }) {
  return (
    <div>
      <label for={id}>{label}</label>
      <input id={id} type={type} step="1" value={value} required={required} onInput={(e) => set(e.currentTarget.value)} />
    </div>
  );
}
