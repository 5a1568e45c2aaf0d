-- An idle queue that still holds messages is looked at again one idle
-- period later.
UPDATE queen.ephemeral_seen SET seen_at = clock_timestamp()
 WHERE incarnation = $1 AND grp = ''
