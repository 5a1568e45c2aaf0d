// Dead letters: filter, inspect, retry one or many, purge a queue's.

import { useState } from "preact/hooks";
import { api, enc } from "../api.js";
import { usePoll } from "../hooks.js";
import { useGrants } from "../session.js";
import { Action, Field, Loading, Note, num, stamp, Table, when } from "../ui.jsx";
import { groupName } from "./groups.jsx";

const PAGE = 100;

function iso(local) {
  return local ? new Date(local).toISOString() : undefined;
}

function Filters({ value, onChange }) {
  const [draft, setDraft] = useState(value);
  const field = (k, label, type = "text") => <Field id={`dlq-${k}`} label={label} type={type} value={draft[k]} set={(v) => setDraft({ ...draft, [k]: v })} />;
  return (
    <form
      class="filters"
      onSubmit={(e) => {
        e.preventDefault();
        onChange(draft);
      }}
    >
      {field("queue", "Queue")}
      {field("consumerGroup", "Consumer group (blank: any)")}
      {field("from", "Failed from", "datetime-local")}
      {field("to", "Failed before", "datetime-local")}
      <div>
        <button type="submit" id="dlq-apply">
          Filter
        </button>
      </div>
    </form>
  );
}

export function DeadLetters() {
  const g = useGrants();
  const [filter, setFilter] = useState({ queue: "", consumerGroup: "", from: "", to: "" });
  const [offset, setOffset] = useState(0);
  const [open, setOpen] = useState(null);
  const [picked, setPicked] = useState(new Set());
  const [done, setDone] = useState(null);
  const key = JSON.stringify([filter, offset]);
  const poll = usePoll(
    () =>
      api("/api/v1/dlq", {
        query: {
          queue: filter.queue,
          consumerGroup: filter.consumerGroup,
          from: iso(filter.from),
          to: iso(filter.to),
          limit: PAGE,
          offset,
        },
      }),
    key,
  );
  const status = usePoll(() => api("/api/v1/status"), "dlq-status", 30000);
  const rows = poll.data ? poll.data.messages : [];
  const toggle = (id) => {
    const next = new Set(picked);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    setPicked(next);
  };
  const retry = (id) => api(`/api/v1/dlq/${enc(id)}/replay`, { method: "POST", body: {} });
  const retryPicked = async () => {
    let moved = 0;
    for (const id of picked) {
      await retry(id);
      moved++;
    }
    return moved;
  };
  // Deleting a dead letter deletes its message: the live copy too, for
  // every group, with every dead letter of it.
  const remove = (m) => api(`/api/v1/messages/${enc(m.partitionId)}/${enc(m.transactionId)}`, { method: "DELETE" });
  const removePicked = async () => {
    let deleted = 0;
    for (const m of rows.filter((r) => picked.has(r.id))) {
      await remove(m);
      deleted++;
    }
    return deleted;
  };
  const dl = status.data && status.data.deadLetterQueue;
  return (
    <>
      <h1>Dead letters</h1>
      {dl && (
        <p id="dlq-totals">
          {num(dl.currentMessages)} dead letters held in {num(dl.affectedPartitions)} partitions;{" "}
          {num(dl.totalMessages - dl.currentMessages)} more were removed by dead-letter retention (pruned).
        </p>
      )}
      <Filters
        value={filter}
        onChange={(f) => {
          setFilter(f);
          setOffset(0);
          setPicked(new Set());
        }}
      />
      {done && (
        <p class="ok" role="status">
          {done}
        </p>
      )}
      {g.write && picked.size > 0 && (
        <div class="row">
          <Action
            label={`Retry ${picked.size} selected`}
            action={retryPicked}
            onDone={(n) => {
              setPicked(new Set());
              setDone(`${n} dead letters pushed back to their queues.`);
              poll.refresh();
            }}
          />
          <Action
            label={`Delete ${picked.size} selected`}
            danger
            confirm={`Delete the ${picked.size} messages picked, and their dead letters, for good?`}
            action={removePicked}
            onDone={(n) => {
              setPicked(new Set());
              setDone(`${n} messages and their dead letters deleted.`);
              poll.refresh();
            }}
          />
        </div>
      )}
      {g.admin && filter.queue && (
        <div class="row">
          <Action
            label={`Delete every dead letter of ${filter.queue}${filter.consumerGroup ? ` for ${filter.consumerGroup}` : ""}`}
            danger
            confirm={`Delete the dead letters of ${filter.queue} for good?`}
            action={async () => {
              let deleted = 0;
              for (let i = 0; i < 1000; i++) {
                const r = await api("/api/v1/dlq", { method: "DELETE", query: { queue: filter.queue, consumerGroup: filter.consumerGroup } });
                deleted += r.deleted;
                if (!r.more) break;
              }
              return deleted;
            }}
            onDone={(n) => {
              setDone(`${n} dead letters deleted.`);
              poll.refresh();
            }}
          />
        </div>
      )}
      {!poll.data ? (
        <Loading poll={poll} />
      ) : (
        <>
          <Note error={poll.error} />
          <Table
            rows={rows}
            rowKey={(m) => m.id}
            empty="No dead letter matches."
            columns={[
              ...(g.write
                ? [
                    {
                      label: "Pick",
                      cell: (m) => <input type="checkbox" aria-label={`pick dead letter ${m.id}`} checked={picked.has(m.id)} onChange={() => toggle(m.id)} />,
                    },
                  ]
                : []),
              { label: "Failed", cell: (m) => <span title={stamp(m.failedAt)}>{when(m.failedAt)}</span> },
              { label: "Queue / partition", cell: (m) => `${m.queue} / ${m.partition}` },
              { label: "Group", cell: (m) => groupName(m.consumerGroup) },
              { label: "Transaction", cell: (m) => <code>{m.transactionId}</code> },
              { label: "Error", cell: (m) => <span class="bad">{m.errorMessage}</span> },
              { label: "Retries", num: true, cell: (m) => num(m.retryCount) },
              {
                label: "Actions",
                cell: (m) => (
                  <span class="row">
                    <button type="button" aria-expanded={open === m.id} aria-label={`${open === m.id ? "Hide" : "Inspect"} dead letter ${m.transactionId}`} onClick={() => setOpen(open === m.id ? null : m.id)}>
                      {open === m.id ? "Hide" : "Inspect"}
                    </button>
                    {g.write && (
                      <Action
                        label="Retry"
                        name={`Retry dead letter ${m.transactionId}`}
                        action={() => retry(m.id)}
                        onDone={(r) => {
                          setDone(`Dead letter ${m.id} pushed back to ${r.queue} / ${r.partition} (${r.result}).`);
                          poll.refresh();
                        }}
                      />
                    )}
                    {g.write && (
                      <Action
                        label="Delete"
                        name={`Delete dead letter ${m.transactionId}`}
                        danger
                        confirm={`Delete message ${m.transactionId} and its dead letters for good?`}
                        action={() => remove(m)}
                        onDone={(r) => {
                          setDone(`Message ${m.transactionId} deleted with ${r.deadLettersDeleted} dead letters.`);
                          poll.refresh();
                        }}
                      />
                    )}
                  </span>
                ),
              },
            ]}
          />
          {open && rows.find((m) => m.id === open) && (
            <section id="dlq-payload">
              <h2>Dead letter {open}</h2>
              <pre>{JSON.stringify(rows.find((m) => m.id === open), null, 2)}</pre>
            </section>
          )}
          <div class="row">
            <button type="button" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))}>
              Newer
            </button>
            <button type="button" disabled={rows.length < PAGE} onClick={() => setOffset(offset + PAGE)}>
              Older
            </button>
          </div>
        </>
      )}
    </>
  );
}

