SELECT DISTINCT s.base_offset FROM unnest($2::int8[]) AS o(off)
CROSS JOIN LATERAL (SELECT base_offset FROM queen.log_segments
                     WHERE partition_id = $1 AND base_offset <= o.off
                     ORDER BY base_offset DESC LIMIT 1) s
