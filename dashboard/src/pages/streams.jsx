// Streaming queries: each registered query with the state it keeps, and
// the deletion of a query no worker runs any more.

import { api, enc } from "../api.js";
import { usePoll } from "../hooks.js";
import { useGrants } from "../session.js";
import { Action, Loading, Table, num, when, withStale } from "../ui.jsx";

const bytes = (n) => (n >= 1048576 ? `${(n / 1048576).toFixed(1)} MiB` : n >= 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${n} B`);

export function Streams() {
  const g = useGrants();
  const poll = usePoll(() => api("/api/v1/resources/streams", { query: { limit: 1000 } }), "streams");
  return (
    <>
      <h1>Streaming queries</h1>
      <section id="streams">
        <h2>Registered queries and their state</h2>
        {!poll.data ? (
          <Loading poll={poll} />
        ) : (
          withStale(poll, (
            <Table
              rows={poll.data.queries}
              rowKey={(q) => q.query_id}
              empty="No streaming query is registered."
              columns={[
                { label: "Query", cell: (q) => q.name },
                { label: "Source", cell: (q) => q.source_queue },
                { label: "Sink", cell: (q) => q.sink_queue || "none" },
                { label: "State rows", num: true, cell: (q) => `${num(q.state_rows)}${q.state_rows_capped ? "+" : ""}` },
                { label: "Partitions", num: true, cell: (q) => num(q.state_partitions) },
                { label: "Size", num: true, cell: (q) => bytes(q.state_bytes) },
                { label: "State written", cell: (q) => when(q.state_written_at) },
                { label: "Registered", cell: (q) => when(q.updated_at) },
                ...(g.admin
                  ? [
                      {
                        label: "Actions",
                        cell: (q) => (
                          <Action
                            label="Delete"
                            danger
                            confirm={`Delete the query ${q.name} and all its state? A worker still running it starts again from nothing.`}
                            action={() => api(`/api/v1/resources/streams/${enc(q.name)}`, { method: "DELETE" })}
                            onDone={poll.refresh}
                          />
                        ),
                      },
                    ]
                  : []),
              ]}
            />
          ))
        )}
      </section>
    </>
  );
}
