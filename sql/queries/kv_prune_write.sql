WITH up AS (
    INSERT INTO queen.kv_usage AS u (ns, keys, bytes, expired_present, rolled_up_at)
    SELECT * , statement_timestamp() FROM unnest($1::text[], $2::int8[], $3::int8[], $4::int8[])
    ON CONFLICT (ns) DO UPDATE SET keys = EXCLUDED.keys, bytes = EXCLUDED.bytes,
           expired_present = EXCLUDED.expired_present, rolled_up_at = EXCLUDED.rolled_up_at
    RETURNING 1)
DELETE FROM queen.kv_usage WHERE ns <> ALL ($1::text[])
