-- queen_proxy 0.9.0 -> 0.10.0 (ALTER EXTENSION queen_proxy UPDATE).
--
-- No change to the proxy: its version follows the shards' (the workspace
-- version), which 0.10.0 moved for the timers' claims and fires
-- (queen--0.9.0--0.10.0.sql). This file is frozen once shipped.
SELECT 1;
