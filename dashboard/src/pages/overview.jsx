// Overview: totals, throughput over the last hour, queues, groups behind,
// table sizes and the background workers.

import { Link } from "wouter-preact";
import { api, segment } from "../api.js";
import { groupName } from "./groups.jsx";
import { usePoll } from "../hooks.js";
import { Card, Chart, Loading, Table, bytes, num, when, withStale } from "../ui.jsx";

function Totals() {
  const poll = usePoll(() => api("/api/v1/resources/overview"), "overview");
  const o = poll.data;
  if (!o) return <Loading poll={poll} />;
  return withStale(poll, (
    <div class="cards" id="totals">
      <Card label="Queues" value={num(o.queues)} />
      <Card label="Partitions" value={num(o.partitions)} />
      <Card label="Messages" value={num(o.messages.total)} />
      <Card label="Pending" value={num(o.messages.pending)} />
      <Card label="Leased" value={num(o.messages.processing)} />
      <Card label="Dead letters" value={num(o.messages.deadLetter)} bad={o.messages.deadLetter > 0} />
      <Card label="In / s (5 min)" value={num(o.throughput.ingestedPerSecond)} />
      <Card label="Out / s (5 min)" value={num(o.throughput.processedPerSecond)} />
      <Card label="Worst lag" value={`${num(o.lag.time.max)} s`} bad={o.lag.time.max > 300} />
    </div>
  ));
}

function Throughput() {
  const poll = usePoll(() => api("/api/v1/status"), "status", 15000);
  const s = poll.data;
  if (!s) return <Loading poll={poll} />;
  // Newest first, buckets without samples left out.
  const points = [...(s.throughput || [])].reverse();
  const times = points.map((p) => Date.parse(p.timestamp) / 1000);
  const span = [Date.parse(s.timeRange.from) / 1000, Date.parse(s.timeRange.to) / 1000];
  if (points.length === 0) return <p class="note">No sample in the last hour yet: the series gains a point a minute.</p>;
  return withStale(poll, (
    <div class="charts">
      <Chart
        span={span}
        title="Messages per second, last hour"
        times={times}
        series={[
          { label: "in", values: points.map((p) => p.ingestedPerSecond) },
          { label: "out", values: points.map((p) => p.processedPerSecond) },
        ]}
      />
      <Chart span={span} title="Pop lag (ms), last hour" times={times} series={[{ label: "avg", values: points.map((p) => p.avgLagMs) }, { label: "max", values: points.map((p) => p.maxLagMs) }]} />
    </div>
  ));
}

function Queues() {
  const poll = usePoll(() => api("/api/v1/status/queues", { query: { limit: 1000 } }), "queues");
  if (!poll.data) return <Loading poll={poll} />;
  return withStale(poll, (
    <Table
      caption="Queues, newest first"
      rows={poll.data.queues}
      rowKey={(q) => q.id}
      empty="No queue yet: push to one, or configure it."
      columns={[
        { label: "Queue", cell: (q) => <Link href={`/queues/${segment(q.name)}`}>{q.name}</Link> },
        { label: "Namespace", cell: (q) => q.namespace || "–" },
        { label: "Partitions", num: true, cell: (q) => num(q.partitions) },
        { label: "Depth", num: true, cell: (q) => num(q.messages.pending) },
        { label: "Leased", num: true, cell: (q) => num(q.messages.processing) },
        { label: "Completed", num: true, cell: (q) => num(q.messages.completed) },
        { label: "Dead letters", num: true, cell: (q) => <span class={q.messages.deadLetter ? "bad" : ""}>{num(q.messages.deadLetter)}</span> },
        { label: "Created", cell: (q) => when(q.createdAt) },
      ]}
    />
  ));
}

function Behind() {
  const poll = usePoll(() => api("/api/v1/consumer-groups"), "groups");
  if (!poll.data) return <Loading poll={poll} />;
  const behind = poll.data.filter((g) => g.totalLag > 0).sort((a, b) => b.maxTimeLag - a.maxTimeLag);
  return withStale(poll, (
    <Table
      caption="Consumer groups with messages left to read, most behind first"
      rows={behind}
      empty="Every consumer group is caught up."
      columns={[
        { label: "Group", cell: (g) => groupName(g.name) },
        { label: "Queue", cell: (g) => <Link href={`/queues/${segment(g.queueName)}`}>{g.queueName}</Link> },
        { label: "Messages behind", num: true, cell: (g) => num(g.totalLag) },
        { label: "Oldest unread", num: true, cell: (g) => `${num(g.maxTimeLag)} s` },
        { label: "Partitions behind", num: true, cell: (g) => num(g.partitionsWithLag) },
        { label: "Leases", num: true, cell: (g) => num(g.members) },
        { label: "State", cell: (g) => <span class={g.state === "Lagging" ? "warn" : ""}>{g.state}</span> },
      ]}
    />
  ));
}

function Sizes() {
  const poll = usePoll(() => api("/api/v1/analytics/postgres-stats"), "sizes", 30000);
  if (!poll.data) return <Loading poll={poll} />;
  const rows = [...poll.data].sort((a, b) => b.totalBytes - a.totalBytes);
  const total = rows.reduce((n, r) => n + Number(r.totalBytes || 0), 0);
  return withStale(poll, (
    <Table
      caption={`Tables of the extension: ${bytes(total)} in all`}
      rows={rows}
      columns={[
        { label: "Table", cell: (r) => r.table },
        { label: "Total", num: true, cell: (r) => bytes(r.totalBytes) },
        { label: "Rows' pages", num: true, cell: (r) => bytes(r.tableBytes) },
        { label: "Indexes", num: true, cell: (r) => bytes(r.indexBytes) },
      ]}
    />
  ));
}

export function Workers() {
  const sweeper = usePoll(() => api("/api/v1/resources/sweeper"), "sweeper");
  const retention = usePoll(() => api("/api/v1/analytics/retention"), "retention", 30000);
  const tasks = usePoll(() => api("/api/v1/resources/maintenance"), "maintenance");
  const s = sweeper.data;
  const r = retention.data;
  return (
    <div id="workers">
      <h3>Maintenance tasks</h3>
      {tasks.data ? (
        <Table
          rows={tasks.data}
          rowKey={(t) => t.task}
          columns={[
            { label: "Task", cell: (t) => t.task },
            { label: "State", cell: (t) => (!t.enabled ? <span class="warn">off</span> : t.running ? `running${t.holder ? ` (${t.holder})` : ""}` : "waiting") },
            { label: "Last started", cell: (t) => when(t.lastStartedAt) },
            { label: "Last finished", cell: (t) => when(t.lastFinishedAt) },
            { label: "Last error", cell: (t) => (t.lastError ? <span class="bad">{t.lastError}</span> : "none") },
            { label: "Next due", cell: (t) => (!t.enabled ? "–" : Date.parse(t.nextDueAt) <= Date.now() ? `now (due ${when(t.nextDueAt)})` : when(t.nextDueAt)) },
          ]}
        />
      ) : (
        <Loading poll={tasks} />
      )}
      <h3>Retention, last hour</h3>
      {r ? (
        <p>
          Deleted {num(r.totals.retentionMsgs)} messages past their retention, {num(r.totals.completedRetentionMsgs)} completed ones and{" "}
          {num(r.totals.evictionMsgs)} evicted by their maximum wait, in {num(r.totals.eventCount)} steps.
        </p>
      ) : (
        <Loading poll={retention} />
      )}
      <h3>Timer and KV sweepers</h3>
      {!s ? (
        <Loading poll={sweeper} />
      ) : !s.available ? (
        <p class="warn">Not running: {s.reason}</p>
      ) : (
        <Table
          rows={[s]}
          columns={[
            { label: "Timers fired", num: true, cell: (m) => num(m.firedTotal) },
            { label: "Due now", num: true, cell: (m) => num(m.due) },
            { label: "Lateness, last / max (ms)", num: true, cell: (m) => `${num(m.fireLatenessLastMs)} / ${num(m.fireLatenessMaxMs)}` },
            { label: "Fires failed", num: true, cell: (m) => num(m.fireFailedTotal) },
            { label: "Set aside", num: true, cell: (m) => num(m.timersSetAside) },
            { label: "KV expired, not yet pruned", num: true, cell: (m) => num(m.kvExpiredPresent) },
            { label: "Last probe", cell: (m) => when(m.lastProbeAt) },
            { label: "Slow phases off", cell: (m) => [m.kvPruneOff && "KV prune", m.kvRollupOff && "KV rollup"].filter(Boolean).join(", ") || "none" },
          ]}
        />
      )}
    </div>
  );
}

export function Overview() {
  return (
    <>
      <h1>Overview</h1>
      <Totals />
      <section>
        <h2>Throughput</h2>
        <Throughput />
      </section>
      <section id="queues">
        <h2>Queues</h2>
        <Queues />
      </section>
      <section id="behind">
        <h2>Consumer groups behind</h2>
        <Behind />
      </section>
      <section>
        <h2>Background workers</h2>
        <Workers />
      </section>
      <section id="sizes">
        <h2>Disk</h2>
        <Sizes />
      </section>
      <p class="note">Refreshed every few seconds while this tab is shown.</p>
    </>
  );
}
