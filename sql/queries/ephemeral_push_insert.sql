-- Appends messages to a partition at sequence numbers $3, $3 + 1, ...
INSERT INTO queen.ephemeral_messages (incarnation, partition, seq, payload, bytes, created_at)
SELECT $1, $2, $3 + u.o - 1, u.p::jsonb, u.b, clock_timestamp()
  FROM unnest($4::text[], $5::int4[]) WITH ORDINALITY AS u(p, b, o)
