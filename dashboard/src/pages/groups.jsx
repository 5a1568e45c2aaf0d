// Consumer groups: lag per queue and partition, seek, delete.

import { useState } from "preact/hooks";
import { Link } from "wouter-preact";
import { api, enc, segment } from "../api.js";
import { usePoll } from "../hooks.js";
import { useGrants } from "../session.js";
import { Action, Loading, Table, num, when, withStale } from "../ui.jsx";

export const QUEUE_MODE = "__QUEUE_MODE__";
export const groupName = (g) => (g === QUEUE_MODE ? "(queue mode)" : g);

function Seek({ group, queue, onDone }) {
  const [at, setAt] = useState("");
  const seek = (body) => () => api(`/api/v1/consumer-groups/${enc(group)}/queues/${enc(queue)}/seek`, { method: "POST", body });
  const id = `seek-${group}-${queue}`.replace(/[^A-Za-z0-9_-]/g, "_");
  return (
    <span class="row">
      <Action label="To beginning" action={seek({ position: "beginning" })} confirm={`Move ${groupName(group)} on ${queue} back to the first message?`} onDone={onDone} />
      <Action label="To end" action={seek({ toEnd: true })} confirm={`Skip ${groupName(group)} on ${queue} past every message?`} onDone={onDone} />
      <label for={id}>to time</label>
      <input id={id} type="datetime-local" step="1" value={at} onInput={(e) => setAt(e.currentTarget.value)} />
      <Action label="Seek" disabled={!at} action={() => seek({ timestamp: new Date(at).toISOString() })()} onDone={onDone} />
    </span>
  );
}

// Rows of the consumer groups summary, with their actions.
export function GroupRows({ rows, refresh }) {
  const g = useGrants();
  return (
    <Table
      rows={rows}
      rowKey={(r) => `${r.name}/${r.queueName}`}
      empty="No consumer group reads this yet."
      columns={[
        { label: "Group", cell: (r) => <Link href={`/groups/${segment(r.name)}`}>{groupName(r.name)}</Link> },
        { label: "Queue", cell: (r) => <Link href={`/queues/${segment(r.queueName)}`}>{r.queueName}</Link> },
        { label: "Behind", num: true, cell: (r) => num(r.totalLag) },
        { label: "Oldest unread", num: true, cell: (r) => `${num(r.maxTimeLag)} s` },
        { label: "Partitions", num: true, cell: (r) => `${num(r.partitionsWithLag)} of ${num(r.partitionCursors)} behind` },
        { label: "Leases", num: true, cell: (r) => num(r.members) },
        { label: "State", cell: (r) => r.state },
        ...(g.write
          ? [
              {
                label: "Actions",
                cell: (r) => (
                  <>
                    <Seek group={r.name} queue={r.queueName} onDone={refresh} />
                    {g.admin && (
                      <Action
                        label="Delete"
                        danger
                        confirm={`Delete ${groupName(r.name)}'s cursors on ${r.queueName}?`}
                        action={() => api(`/api/v1/consumer-groups/${enc(r.name)}/queues/${enc(r.queueName)}`, { method: "DELETE" })}
                        onDone={refresh}
                      />
                    )}
                  </>
                ),
              },
            ]
          : []),
      ]}
    />
  );
}

function Detail({ group }) {
  const poll = usePoll(() => api(`/api/v1/consumer-groups/${enc(group)}`), `group-${group}`);
  if (!poll.data) return <Loading poll={poll} />;
  const rows = Object.entries(poll.data).flatMap(([queue, d]) => d.partitions.map((p) => ({ queue, ...p })));
  return withStale(poll, (
    <Table
      caption={`${groupName(group)}: cursor per partition`}
      rows={rows}
      rowKey={(p) => p.partitionId}
      empty="This group holds no cursor."
      columns={[
        { label: "Queue", cell: (p) => p.queue },
        { label: "Partition", cell: (p) => p.partition },
        { label: "Cursor", num: true, cell: (p) => num(p.committedOffset) },
        { label: "Last offset", num: true, cell: (p) => num(p.lastOffset) },
        { label: "Behind", num: true, cell: (p) => num(p.offsetLag) },
        { label: "Oldest unread", num: true, cell: (p) => `${num(p.timeLagSeconds)} s` },
        { label: "Lease", cell: (p) => (p.leaseActive ? `held${p.workerId ? ` by ${p.workerId}` : ""}` : "none") },
        { label: "Last consumed", cell: (p) => when(p.lastConsumedAt) },
      ]}
    />
  ));
}

export function Groups({ group }) {
  const poll = usePoll(() => api("/api/v1/consumer-groups"), "all-groups");
  return (
    <>
      <h1>Consumer groups</h1>
      {group && (
        <section id="group-detail">
          <h2>{groupName(group)}</h2>
          <Detail group={group} />
        </section>
      )}
      <section id="groups">
        <h2>Every group, per queue</h2>
        {poll.data ? <GroupRows rows={poll.data} refresh={poll.refresh} /> : <Loading poll={poll} />}
      </section>
    </>
  );
}
