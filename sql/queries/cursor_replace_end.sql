
-- (ends cursor_replace.sql) A state at seq + 1 already there was written
-- by another transaction that held the same state: in READ COMMITTED the
-- insert answers no row (the caller answers 40001); in REPEATABLE READ
-- PostgreSQL answers 40001 itself. Either way nothing is written twice.
ON CONFLICT (cursor_id, seq) DO NOTHING
RETURNING cursor_id
