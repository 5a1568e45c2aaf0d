          AND p.queue_id = w.queue_id AND p.id NOT IN (SELECT unnest($5::int8[]))
        ORDER BY c.lease_expires_at NULLS FIRST, p.id
        LIMIT $4) k
 ORDER BY k.lease_expires_at NULLS FIRST, k.id
 LIMIT $4
