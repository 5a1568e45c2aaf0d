SELECT p.queue_id, p.name, p.id FROM queen.log_partitions p JOIN unnest($1::int8[], $2::text[]) AS k(queue_id, name) ON p.queue_id = k.queue_id AND p.name = k.name
