-- The retention cycle's compaction of live ephemeral queues, for at most
-- $3 partitions after ($1, $2) in (incarnation, partition) order: deletes
-- at most $4 rows of each kind the message path left behind (it deletes
-- nothing, docs/architecture.md "MVCC"): the versions of a queue's
-- tallies, a partition's bounds and a group's cursor below the newest; the
-- messages below the partition's tail; and the leases of messages below
-- the tail or settled, every version of such a lease in one go (a lease's
-- newest version is its state, so none is left with an older one newest).
-- Answers the rows deleted, the most of one kind (a kind that filled its
-- batch may have more), and the partitions visited and the last of them.
WITH p AS (
    SELECT p.incarnation, p.partition, v.tail, v.ver
      FROM queen.ephemeral_partitions p
      JOIN queen.ephemeral_state s ON s.incarnation = p.incarnation
     CROSS JOIN LATERAL (SELECT v.tail, v.ver FROM queen.ephemeral_partition_states v
                          WHERE v.incarnation = p.incarnation AND v.partition = p.partition
                          ORDER BY v.ver DESC LIMIT 1) v
     WHERE (p.incarnation, p.partition) > ($1, $2)
     ORDER BY p.incarnation, p.partition
     LIMIT $3
), m AS (
    DELETE FROM queen.ephemeral_messages d
     WHERE d.ctid = ANY (ARRAY(
           SELECT x.ctid FROM p CROSS JOIN LATERAL (
                  SELECT m.ctid FROM queen.ephemeral_messages m
                   WHERE m.incarnation = p.incarnation AND m.partition = p.partition
                     AND m.seq < p.tail
                   LIMIT $4) x
            LIMIT $4))
    RETURNING 1
), v AS (
    DELETE FROM queen.ephemeral_partition_states d
     WHERE d.ctid = ANY (ARRAY(
           SELECT x.ctid FROM p CROSS JOIN LATERAL (
                  SELECT v.ctid FROM queen.ephemeral_partition_states v
                   WHERE v.incarnation = p.incarnation AND v.partition = p.partition
                     AND v.ver < p.ver
                   LIMIT $4) x
            LIMIT $4))
    RETURNING 1
), c AS (
    DELETE FROM queen.ephemeral_cursors d
     WHERE d.ctid = ANY (ARRAY(
           SELECT x.ctid FROM p CROSS JOIN LATERAL (
                  SELECT c.ctid FROM queen.ephemeral_cursors c
                   WHERE c.incarnation = p.incarnation AND c.partition = p.partition
                     AND c.ver < (SELECT max(n.ver) FROM queen.ephemeral_cursors n
                                   WHERE n.incarnation = c.incarnation AND n.partition = c.partition
                                     AND n.grp = c.grp)
                   LIMIT $4) x
            LIMIT $4))
    RETURNING 1
), l AS (
    DELETE FROM queen.ephemeral_leases d
     USING (SELECT DISTINCT x.incarnation, x.partition, x.grp, x.seq
              FROM p CROSS JOIN LATERAL (
                   SELECT l.incarnation, l.partition, l.grp, l.seq FROM queen.ephemeral_leases l
                    WHERE l.incarnation = p.incarnation AND l.partition = p.partition
                      AND (l.seq < p.tail OR l.lease_until = 'infinity')
                    LIMIT $4) x
             LIMIT $4) k
     WHERE d.incarnation = k.incarnation AND d.partition = k.partition
       AND d.grp = k.grp AND d.seq = k.seq
    RETURNING 1
), t AS (
    DELETE FROM queen.ephemeral_tallies d
     WHERE d.ctid = ANY (ARRAY(
           SELECT x.ctid FROM (SELECT DISTINCT p.incarnation FROM p) q CROSS JOIN LATERAL (
                  SELECT t.ctid FROM queen.ephemeral_tallies t
                   WHERE t.incarnation = q.incarnation
                     AND t.ver < (SELECT max(n.ver) FROM queen.ephemeral_tallies n
                                   WHERE n.incarnation = q.incarnation)
                   LIMIT $4) x
            LIMIT $4))
    RETURNING 1
)
, n AS (
    SELECT (SELECT count(*) FROM m) AS m, (SELECT count(*) FROM v) AS v,
           (SELECT count(*) FROM c) AS c, (SELECT count(*) FROM l) AS l,
           (SELECT count(*) FROM t) AS t
)
SELECT (n.m + n.v + n.c + n.l + n.t)::bigint AS deleted,
       GREATEST(n.m, n.v, n.c, n.l, n.t)::bigint AS fullest,
       (SELECT count(*) FROM p)::bigint AS partitions,
       (SELECT p.incarnation FROM p ORDER BY p.incarnation DESC, p.partition DESC LIMIT 1) AS last_incarnation,
       (SELECT p.partition FROM p ORDER BY p.incarnation DESC, p.partition DESC LIMIT 1) AS last_partition
  FROM n
