-- At most $2 cursors with an id above $1, in id order (the compaction's
-- sweep over every cursor).
SELECT id FROM queen.log_cursors WHERE id > $1 ORDER BY id LIMIT $2
