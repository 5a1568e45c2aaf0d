-- Registered queries by name after $1 (from the first when NULL), at most
-- $2, each with its state counted up to $3 rows: how many rows, over how
-- many partitions, their size and when one was last written.
SELECT s.id, s.name, s.source_queue, s.sink_queue, s.config_hash,
       (extract(epoch FROM s.created_at) * 1e6)::bigint AS created_us,
       (extract(epoch FROM s.updated_at) * 1e6)::bigint AS updated_us,
       st.rows, st.partitions, st.bytes,
       (extract(epoch FROM st.last_write_at) * 1e6)::bigint AS written_us
  FROM queen.stream_queries s
 CROSS JOIN LATERAL (
       SELECT count(*) AS rows, count(DISTINCT partition_id) AS partitions,
              COALESCE(sum(pg_column_size(value)), 0)::bigint AS bytes,
              max(updated_at) AS last_write_at
         FROM (SELECT partition_id, value, updated_at
                 FROM queen.stream_state
                WHERE query_id = s.id
                LIMIT $3) AS capped
       ) st
 WHERE $1::text IS NULL OR s.name > $1
 ORDER BY s.name
 LIMIT $2
