-- queen: the policy-free SQL pieces of retention. The steps that use them,
-- and everything that decides what a queue's settings mean, are in Rust
-- (queen_ext/src/maintenance/retention/).

-- The smallest base_offset in [p_from, p_horizon) of a segment created at or
-- after p_cutoff: the first segment fresh enough to keep. created_at never
-- decreases with the offset, so this is one forward walk of the primary key
-- from the watermark, and the horizon bounds it to one batch of entries
-- whether or not anything matches. NULL: nothing in the window is fresh.
CREATE FUNCTION queen_internal.log_retention_boundary_windowed_v1(
    p_pid bigint, p_from bigint, p_cutoff timestamptz, p_horizon bigint
) RETURNS bigint
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT s.base_offset
      FROM queen.log_segments s
     WHERE s.partition_id = p_pid
       AND s.base_offset >= p_from
       -- A plain range bound (no OR), so the index scan stops at the horizon.
       AND s.base_offset < COALESCE(p_horizon, 9223372036854775807)
       AND s.created_at >= p_cutoff
     ORDER BY s.base_offset
     LIMIT 1
$$;

-- Whether a partition may be reclaimed by the empty-partition cleanup: both
-- its timestamps older than the cutoff, no segment left, no dead letter
-- pointing into it, no streaming query's state kept for it, and no live
-- lease on it. The one place the veto lives:
-- the candidate scan and the re-check under the row locks both call it.
CREATE FUNCTION queen_internal.log_partition_dead_v1(p_pid bigint, p_cutoff timestamptz)
RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT EXISTS (
        SELECT 1
          FROM queen.log_partitions p
         WHERE p.id = p_pid
           AND p.created_at < p_cutoff
           AND p.last_write_at < p_cutoff
           AND NOT EXISTS (SELECT 1 FROM queen.log_segments s WHERE s.partition_id = p.id)
           AND NOT EXISTS (SELECT 1 FROM queen.log_dlq d WHERE d.partition_id = p.id)
           AND NOT EXISTS (SELECT 1 FROM queen.stream_state st WHERE st.partition_id = p.id)
           AND NOT EXISTS (SELECT 1 FROM queen.log_consumers c
                            WHERE c.partition_id = p.id AND c.lease_id IS NOT NULL
                              AND c.lease_expires_at > now()))
$$;
