-- Ends a group's leases on messages $4 (a schema before 0.9.0; after, a
-- settlement is a version, ephemeral_lease_log_end.sql). Each is found by a
-- probe of its whole key, in a subquery of its own (OFFSET 0): joined
-- freely, the planner read the group's whole range of leases and filtered
-- it, every lease a snapshot held open elsewhere keeps from being pruned
-- included.
DELETE FROM queen.ephemeral_leases
 WHERE ctid = ANY (ARRAY(
       SELECT k.ctid
         FROM unnest($4::int8[]) AS u(seq)
        CROSS JOIN LATERAL (SELECT x.ctid FROM queen.ephemeral_leases x
                             WHERE x.incarnation = $1 AND x.partition = $2 AND x.grp = $3
                               AND x.seq = u.seq OFFSET 0) k))
