INSERT INTO queen.retention_work (token, seq, phase, partition_id, all_cutoff, completed_cutoff, cutoff, failing)
SELECT $1, ord::int, phase, pid, a, cm, cu, f
  FROM unnest($2::int2[], $3::int8[], $4::timestamptz[], $5::timestamptz[], $6::timestamptz[], $7::bool[])
       WITH ORDINALITY AS u(phase, pid, a, cm, cu, f, ord)
