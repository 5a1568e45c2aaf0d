-- queen_proxy 0.8.0 -> 0.9.0 (ALTER EXTENSION queen_proxy UPDATE).
--
-- No change to the proxy: its version follows the shards' (the workspace
-- version), which 0.9.0 moved for the ephemeral queues' leases
-- (queen--0.8.0--0.9.0.sql). This file is frozen once shipped.
SELECT 1;
