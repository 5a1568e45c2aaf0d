SELECT id FROM unnest($1::int8[]) AS c(id) WHERE queen_internal.log_partition_dead_v1(c.id, $2) ORDER BY id
