-- The ephemeral queues over all: how many (declared or live), the bytes
-- they hold, and the last incarnation drawn.
SELECT (SELECT count(*) FROM queen.ephemeral_state s
          FULL JOIN queen.ephemeral_queues q ON q.queue = s.queue)::bigint AS queues,
       (SELECT coalesce(sum(bytes), 0) FROM queen.ephemeral_state)::bigint AS bytes,
       (SELECT CASE WHEN is_called THEN last_value END
          FROM queen.ephemeral_incarnation_seq) AS epoch
