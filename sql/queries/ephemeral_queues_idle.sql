-- At most $2 notes of queues no push or pop has named for $1 seconds,
-- oldest first: the queue's name (NULL: its incarnation has ended) and
-- whether it is declared.
SELECT s.incarnation AS incarnation,
       st.queue AS queue,
       EXISTS (SELECT 1 FROM queen.ephemeral_queues d WHERE d.queue = st.queue) AS declared
  FROM queen.ephemeral_seen s
  LEFT JOIN queen.ephemeral_state st ON st.incarnation = s.incarnation
 WHERE s.grp = ''
   AND s.seen_at < clock_timestamp() - $1 * interval '1 second'
 ORDER BY s.seen_at
 LIMIT $2
