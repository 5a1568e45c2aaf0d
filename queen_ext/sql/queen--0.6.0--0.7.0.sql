-- queen 0.6.0 -> 0.7.0 (ALTER EXTENSION queen UPDATE).
--
-- No change to the schema: the version follows the workspace's, which the
-- sharding proxy's new functions moved (queen_proxy--0.6.0--0.7.0.sql).
-- This file is frozen once shipped.
SELECT 1;
