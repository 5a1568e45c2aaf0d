INSERT INTO queen.kv AS k (ns, key, value, version, expires_at, created_at, updated_at)
SELECT n, kk, v::jsonb, ver,
       coalesce(timestamptz 'epoch' + e * interval '1 microsecond', 'infinity'),
       timestamptz 'epoch' + cr * interval '1 microsecond',
       timestamptz 'epoch' + up * interval '1 microsecond'
  FROM unnest($1::text[], $2::text[], $3::text[], $4::int8[], $5::int8[], $6::int8[], $7::int8[]) AS u(n, kk, v, ver, e, cr, up)
ON CONFLICT (ns, key) DO UPDATE
   SET value = EXCLUDED.value, version = EXCLUDED.version, expires_at = EXCLUDED.expires_at,
       created_at = EXCLUDED.created_at, updated_at = EXCLUDED.updated_at
