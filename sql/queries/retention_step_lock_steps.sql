-- The advisory lock two retention steps on one partition take turns on,
-- for the step's transaction.
SELECT pg_advisory_xact_lock($1, $2)
