// One queue: partitions, consumer groups, options (view and edit) and what
// retention deletes next.

import { useState } from "preact/hooks";
import { api, enc } from "../api.js";
import { usePoll } from "../hooks.js";
import { useGrants } from "../session.js";
import { Card, Loading, Note, Table, num, stamp, when, withStale } from "../ui.jsx";
import { GroupRows } from "./groups.jsx";

// Options as configure takes them: the kind of input each is edited with.
const OPTION_KINDS = {
  namespace: "text",
  task: "text",
  priority: "int",
  leaseTime: "int",
  retryLimit: "int",
  retryDelay: "int",
  deadLetterQueue: "bool",
  dlqAfterMaxRetries: "bool",
  delayedProcessing: "int",
  windowBuffer: "int",
  maxSize: "int",
  maxQueueSize: "int",
  retentionEnabled: "bool",
  retentionSeconds: "int",
  completedRetentionSeconds: "int",
  maxWaitTimeSeconds: "int",
  dedupWindowSeconds: "int",
  dlqRetentionSeconds: "int",
  minPopWaitTime: "int",
  encryptionEnabled: "bool",
};

function shown(v) {
  if (v === null || v === undefined) return "–";
  if (typeof v === "boolean") return v ? "yes" : "no";
  return String(v);
}

function Options({ queue, options, onSaved }) {
  const g = useGrants();
  const [draft, setDraft] = useState(null);
  const [error, setError] = useState(null);
  const [saved, setSaved] = useState(null);
  const keys = Object.keys(options).filter((k) => k in OPTION_KINDS);
  if (!draft) {
    return (
      <>
        <dl class="options" id="options">
          {Object.entries(options).map(([k, v]) => (
            <>
              <dt>{k}</dt>
              <dd data-option={k}>{shown(v)}</dd>
            </>
          ))}
        </dl>
        {saved && <p class="ok" role="status">{saved}</p>}
        {g.write && (
          <div class="row">
            <button type="button" id="edit-options" onClick={() => setDraft(Object.fromEntries(keys.map((k) => [k, options[k]])))}>
              Edit options
            </button>
          </div>
        )}
      </>
    );
  }
  const submit = async (e) => {
    e.preventDefault();
    setError(null);
    // Merge: only what changed is sent; every other option keeps its value.
    const changed = {};
    for (const k of keys) {
      const kind = OPTION_KINDS[k];
      let v = draft[k];
      if (kind === "int") v = v === "" || v === null ? null : Number(v);
      if (kind === "text") v = v === "" ? null : v;
      if (v !== options[k]) changed[k] = v;
    }
    if (Object.keys(changed).length === 0) {
      setDraft(null);
      return;
    }
    try {
      await api("/api/v1/configure", { method: "POST", body: { queue, options: changed, mode: "merge" } });
      setDraft(null);
      setSaved(`Saved: ${Object.keys(changed).join(", ")}.`);
      onSaved();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <form onSubmit={submit} id="options-form">
      <p class="note">Only the options you change are sent (merge): every other option keeps its stored value. An emptied number goes back to its default.</p>
      <div class="filters">
        {keys.map((k) => {
          const kind = OPTION_KINDS[k];
          const id = `opt-${k}`;
          return (
            <div>
              <label for={id}>{k}</label>
              {kind === "bool" ? (
                <input id={id} name={k} type="checkbox" checked={!!draft[k]} onChange={(e) => setDraft({ ...draft, [k]: e.currentTarget.checked })} />
              ) : (
                <input
                  id={id}
                  name={k}
                  type={kind === "int" ? "number" : "text"}
                  step="1"
                  value={draft[k] ?? ""}
                  onInput={(e) => setDraft({ ...draft, [k]: e.currentTarget.value })}
                />
              )}
            </div>
          );
        })}
      </div>
      <Note error={error} />
      <div class="row">
        <button type="submit" id="save-options">
          Save
        </button>
        <button type="button" onClick={() => setDraft(null)}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function Retention({ queue }) {
  const poll = usePoll(() => api(`/api/v1/resources/queues/${enc(queue)}/retention`), `ret-${queue}`, 15000);
  const r = poll.data;
  if (!r) return <Loading poll={poll} />;
  const c = r.cutoffs || {};
  const rules = [
    c.retention && `Messages written before ${stamp(c.retention)} are deleted (retentionSeconds).`,
    c.completedRetention && `Messages every consumer group has read, written before ${stamp(c.completedRetention)}, are deleted (completedRetentionSeconds).`,
    c.maxWait && `Messages waiting since before ${stamp(c.maxWait)} are evicted (maxWaitTimeSeconds).`,
    c.deadLetters && `Dead letters that failed before ${stamp(c.deadLetters)} are deleted (dlqRetentionSeconds).`,
    c.transactionIds && `Transaction ids pushed before ${stamp(c.transactionIds)} are forgotten (dedupWindowSeconds): a push that sends one again is no longer a duplicate.`,
  ].filter(Boolean);
  return withStale(poll, (
    <div id="retention">
      {!c.retention && !c.completedRetention && !c.maxWait && (
        <p>No retention rule deletes this queue's messages by age: they stay until the queue or its partitions are deleted.</p>
      )}
      <ul class="words">
        {rules.map((w) => (
          <li>{w}</li>
        ))}
      </ul>
      <Table
        rows={r.partitions}
        rowKey={(p) => p.partitionId}
        empty="No partition."
        columns={[
          { label: "Partition", cell: (p) => p.partition },
          { label: "Live offsets", cell: (p) => `${num(p.logStart)} – ${num(p.lastOffset)}` },
          {
            label: "Next cycle deletes",
            num: true,
            cell: (p) => `${num(p.nextCycleDeletes.messages)} messages (${num(p.nextCycleDeletes.segments)} segments)`,
          },
          {
            label: "What keeps the rest",
            cell: (p) =>
              p.pinnedBy && p.pinnedBy.length ? (
                <ul class="words">
                  {p.pinnedBy.map((w) => (
                    <li>{w}</li>
                  ))}
                </ul>
              ) : (
                "nothing"
              ),
          },
          {
            label: "Failing steps",
            cell: (p) =>
              p.failing && p.failing.length
                ? p.failing.map((f) => (
                    <div class="bad">
                      {f.phase}: {f.error} ({f.sqlstate}), {num(f.failures)} times, last {when(f.failedAt)}
                    </div>
                  ))
                : "none",
          },
        ]}
      />
    </div>
  ));
}

function Groups({ queue }) {
  const poll = usePoll(() => api("/api/v1/consumer-groups"), `groups-${queue}`);
  if (!poll.data) return <Loading poll={poll} />;
  return withStale(poll, <GroupRows rows={poll.data.filter((g) => g.queueName === queue)} refresh={poll.refresh} />);
}

export function Queue({ name }) {
  const poll = usePoll(() => api(`/api/v1/resources/queues/${enc(name)}`), `queue-${name}`);
  const counts = usePoll(() => api(`/api/v1/resources/queues/${enc(name)}/counts`), `counts-${name}`, 15000);
  const q = poll.data;
  return (
    <>
      <h1>Queue {name}</h1>
      {!q ? (
        <Loading poll={poll} />
      ) : (
        <>
          <div class="cards">
            <Card label="Partitions" value={num(q.totals.partitions)} />
            <Card label="Depth" value={num(q.totals.pending)} />
            <Card label="Leased" value={num(q.totals.processing)} />
            <Card label="Dead letters" value={num(q.totals.deadLetter)} bad={q.totals.deadLetter > 0} />
            <Card label="Dead letters pruned" value={counts.data ? num(counts.data.pruned_failed) : "–"} />
          </div>
          <section>
            <h2>Partitions</h2>
            <Table
              rows={q.partitions}
              rowKey={(p) => p.id}
              columns={[
                { label: "Partition", cell: (p) => p.name },
                { label: "Depth", num: true, cell: (p) => num(p.stats.pending) },
                { label: "Leased", num: true, cell: (p) => num(p.stats.processing) },
                { label: "Dead letters", num: true, cell: (p) => num(p.stats.deadLetter) },
                { label: "Offsets", num: true, cell: (p) => `${num(p.logStart)} – ${num(p.lastOffset)}` },
                { label: "Oldest live message", cell: (p) => when(p.oldestMessage) },
                { label: "Last write", cell: (p) => when(p.newestMessage) },
              ]}
            />
          </section>
          <section>
            <h2>Consumer groups</h2>
            <Groups queue={name} />
          </section>
          <section>
            <h2>Options</h2>
            <Options queue={name} options={q.options} onSaved={poll.refresh} />
          </section>
          <section>
            <h2>Retention</h2>
            <Retention queue={name} />
          </section>
        </>
      )}
    </>
  );
}
