 LIMIT $5) k ON true
 WHERE q.tenant_id = $1 AND q.name = $2
 ORDER BY k.lease_expires_at NULLS FIRST, k.id
