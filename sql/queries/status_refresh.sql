SELECT (SELECT count(*) FROM queen.queues)::int8 AS queues,
       (SELECT count(*) FROM queen.log_partitions)::int8 AS partitions,
       (SELECT count(DISTINCT namespace) FROM queen.queues WHERE namespace IS NOT NULL)::int8 AS namespaces,
       (SELECT count(DISTINCT task) FROM queen.queues WHERE task IS NOT NULL)::int8 AS tasks,
       (extract(epoch FROM now()) * 1000000)::int8 AS now_us
