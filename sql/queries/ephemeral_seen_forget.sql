-- The note of queue $1 (its incarnation) goes when no push or pop has
-- written it for $2 seconds; answers whether it went. Run holding the
-- queue's tallies locked, it sees every push and pop that named the queue
-- before.
DELETE FROM queen.ephemeral_seen
 WHERE incarnation = $1 AND grp = ''
   AND seen_at < clock_timestamp() - $2 * interval '1 second'
RETURNING incarnation
