UPDATE queen.log_dlq d
  SET message_id = w.mid::uuid, transaction_id = w.txn, trace_id = w.trace::uuid,
      payload = w.payload, created_at = to_timestamp(w.us / 1000000.0)
 FROM unnest($1::int8[], $2::text[], $3::text[], $4::text[], $5::bytea[], $6::int8[])
      AS w(id, mid, txn, trace, payload, us)
WHERE d.id = w.id
