 LIMIT $5) k
 ORDER BY k.lease_expires_at NULLS FIRST, k.id
 LIMIT $5
