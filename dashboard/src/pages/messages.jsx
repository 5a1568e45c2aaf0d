// Messages: browse a queue's partition, look one up by transaction id, and
// see its trace events.

import { useState } from "preact/hooks";
import { api, enc } from "../api.js";
import { usePoll } from "../hooks.js";
import { Field, Loading, Note, num, stamp, Table } from "../ui.jsx";
import { groupName } from "./groups.jsx";

const PAGE = 50;

function Browse({ onPick }) {
  const [draft, setDraft] = useState({ queue: "", partition: "", status: "" });
  const [filter, setFilter] = useState(null);
  const poll = usePoll(
    () => (filter ? api("/api/v1/messages", { query: { ...filter, limit: PAGE } }) : Promise.resolve(null)),
    JSON.stringify(filter),
    15000,
  );
  const field = (k, label) => <Field id={`msg-${k}`} label={label} value={draft[k]} set={(v) => setDraft({ ...draft, [k]: v })} />;
  return (
    <>
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          setFilter({ ...draft });
        }}
      >
        {field("queue", "Queue")}
        {field("partition", "Partition")}
        <div>
          <label for="msg-status">Status</label>
          <select id="msg-status" value={draft.status} onChange={(e) => setDraft({ ...draft, status: e.currentTarget.value })}>
            <option value="">any</option>
            <option value="pending">pending</option>
            <option value="processing">leased</option>
            <option value="completed">completed</option>
            <option value="dead_letter">dead letter</option>
          </select>
        </div>
        <div>
          <button type="submit" id="msg-browse">
            Show the last hour
          </button>
        </div>
      </form>
      {filter && (poll.data ? (
        <Table
          rows={poll.data.messages}
          rowKey={(m) => m.id}
          empty="No message matches in the last hour."
          columns={[
            { label: "Offset", num: true, cell: (m) => num(m.offset) },
            { label: "Queue / partition", cell: (m) => m.queuePath },
            { label: "Transaction", cell: (m) => <button type="button" class="linkish" onClick={() => onPick(m.partitionId, m.transactionId)}>{m.transactionId}</button> },
            { label: "Status", cell: (m) => m.status },
            { label: "Pushed", cell: (m) => stamp(m.createdAt) },
            {
              label: "Payload",
              cell: (m) => <code>{m.isEncrypted ? "(encrypted)" : !m.payloadAvailable ? "(not available)" : String(JSON.stringify(m.data) ?? "").slice(0, 80)}</code>,
            },
          ]}
        />
      ) : (
        <Loading poll={poll} />
      ))}
    </>
  );
}

function One({ partitionId, txn }) {
  const message = usePoll(() => api(`/api/v1/messages/${enc(partitionId)}/${enc(txn)}`), `m-${partitionId}-${txn}`, 15000);
  const traces = usePoll(() => api(`/api/v1/traces/${enc(partitionId)}/${enc(txn)}`), `t-${partitionId}-${txn}`, 15000);
  const m = message.data;
  return (
    <section id="message">
      <h2>Message {txn}</h2>
      {!m ? (
        <Loading poll={message} />
      ) : (
        <>
          <p>
            {m.queuePath} at offset {num(m.offset)}, pushed {stamp(m.createdAt)}, {m.status}
            {m.errorMessage ? `: ${m.errorMessage}` : ""}.
          </p>
          <Table
            rows={m.consumerGroups}
            columns={[
              { label: "Group", cell: (c) => groupName(c.consumerGroup) },
              { label: "Status", cell: (c) => c.status },
              { label: "Cursor", num: true, cell: (c) => num(c.committedOffset) },
              { label: "Error", cell: (c) => c.errorMessage || "–" },
            ]}
          />
          <pre>{JSON.stringify(m.data, null, 2)}</pre>
        </>
      )}
      <h3>Trace</h3>
      {traces.data ? (
        <Table
          rows={traces.data.traces}
          rowKey={(t) => t.id}
          empty="No trace event was recorded for this message."
          columns={[
            { label: "When", cell: (t) => stamp(t.created_at) },
            { label: "Event", cell: (t) => t.event_type },
            { label: "Group", cell: (t) => groupName(t.consumer_group) },
            { label: "Names", cell: (t) => (t.trace_names || []).join(", ") },
            { label: "Data", cell: (t) => <code>{JSON.stringify(t.data)}</code> },
          ]}
        />
      ) : (
        <Loading poll={traces} />
      )}
    </section>
  );
}

export function Messages() {
  const [look, setLook] = useState({ partitionId: "", txn: "" });
  const [shown, setShown] = useState(null);
  return (
    <>
      <h1>Messages</h1>
      <section>
        <h2>Look a message up</h2>
        <form
          class="filters"
          onSubmit={(e) => {
            e.preventDefault();
            setShown({ ...look });
          }}
        >
          <Field id="look-partition" label="Partition id" required value={look.partitionId} set={(v) => setLook({ ...look, partitionId: v })} />
          <Field id="look-txn" label="Transaction id" required value={look.txn} set={(v) => setLook({ ...look, txn: v })} />
          <div>
            <button type="submit" id="look-go">
              Look up
            </button>
          </div>
        </form>
        <Note>Pick a transaction id in the list below to look it up.</Note>
      </section>
      {shown && <One partitionId={shown.partitionId} txn={shown.txn} />}
      <section>
        <h2>Browse</h2>
        <Browse
          onPick={(partitionId, txn) => {
            setLook({ partitionId, txn });
            setShown({ partitionId, txn });
          }}
        />
      </section>
    </>
  );
}
