// Timers and KV: a queue's timers, the sweepers, KV namespaces and their
// usage against quota.

import { useState } from "preact/hooks";
import { api, enc } from "../api.js";
import { usePoll } from "../hooks.js";
import { Card, Loading, Table, bytes, num, stamp, when, withStale } from "../ui.jsx";
import { Workers } from "./overview.jsx";

function Timers() {
  const [draft, setDraft] = useState("");
  const [queue, setQueue] = useState("");
  const poll = usePoll(() => (queue ? api(`/api/v1/timers/${enc(queue)}`, { query: { limit: 100 } }) : Promise.resolve(null)), `timers-${queue}`);
  return (
    <>
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          setQueue(draft.trim());
        }}
      >
        <div>
          <label for="timers-queue">Queue</label>
          <input id="timers-queue" value={draft} onInput={(e) => setDraft(e.currentTarget.value)} />
        </div>
        <div>
          <button type="submit" id="timers-go">
            Show timers
          </button>
        </div>
      </form>
      {queue &&
        (poll.data ? (
          <Table
            caption={poll.data.truncated ? "The first 100 timers, by key" : "Timers, by key"}
            rows={poll.data.rows}
            rowKey={(t) => t.timerKey}
            empty="No timer is set on this queue."
            columns={[
              { label: "Key", cell: (t) => <code>{t.timerKey}</code> },
              { label: "Partition", cell: (t) => t.partition },
              { label: "Fires", cell: (t) => <span title={stamp(t.deliverAt)}>{when(t.deliverAt)}</span> },
              { label: "Attempts", num: true, cell: (t) => num(t.attempts) },
              { label: "Last error", cell: (t) => (t.lastError ? <span class="bad">{t.lastError}</span> : "–") },
            ]}
          />
        ) : (
          <Loading poll={poll} />
        ))}
    </>
  );
}

function Kv() {
  const spaces = usePoll(() => api("/api/v1/resources/kv/namespaces"), "kv-ns");
  const usage = usePoll(() => api("/api/v1/resources/kv/usage"), "kv-usage", 15000);
  if (!spaces.data) return <Loading poll={spaces} />;
  const used = new Map(((usage.data && usage.data.namespaces) || []).map((u) => [u.ns, u]));
  const quota = (n, max, fmt) => (max === null || max === undefined ? `${fmt(n)} (no limit)` : `${fmt(n)} of ${fmt(max)}`);
  return withStale(spaces, (
    <Table
      rows={spaces.data}
      rowKey={(s) => s.namespace}
      empty="No KV namespace holds a key."
      columns={[
        { label: "Namespace", cell: (s) => s.namespace },
        { label: "Live keys", num: true, cell: (s) => num(s.keys) },
        { label: "Keys against quota", num: true, cell: (s) => (used.has(s.namespace) ? quota(used.get(s.namespace).keys, used.get(s.namespace).maxKeys, num) : "–") },
        { label: "Bytes against quota", num: true, cell: (s) => (used.has(s.namespace) ? quota(used.get(s.namespace).bytes, used.get(s.namespace).maxBytes, bytes) : "–") },
        { label: "Expired, not yet pruned", num: true, cell: (s) => (used.has(s.namespace) ? num(used.get(s.namespace).expiredPresent) : "–") },
        { label: "Counted", cell: (s) => (used.has(s.namespace) ? when(used.get(s.namespace).rolledUpAt) : "–") },
      ]}
    />
  ));
}

// What the timers and the KV store hold over every queue and namespace.
function Held() {
  const poll = usePoll(() => api("/api/v1/resources/queues"), "held", 15000);
  if (!poll.data) return <Loading poll={poll} />;
  const r = poll.data;
  return withStale(
    poll,
    <div class="cards" id="held">
      <Card label="Timers set" value={num(r.timerRows)} />
      <Card label="Timers' bytes" value={bytes(r.timerBytes)} />
      <Card label="KV rows" value={num(r.kvRows)} />
      <Card label="KV bytes" value={bytes(r.kvBytes)} />
    </div>,
  );
}

export function TimersKv() {
  return (
    <>
      <h1>Timers and KV</h1>
      <Held />
      <section>
        <h2>Sweepers</h2>
        <Workers />
      </section>
      <section id="timers">
        <h2>Timers of a queue</h2>
        <Timers />
      </section>
      <section id="kv">
        <h2>KV namespaces</h2>
        <Kv />
      </section>
    </>
  );
}
