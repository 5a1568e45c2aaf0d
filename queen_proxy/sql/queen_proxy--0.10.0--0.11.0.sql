-- queen_proxy 0.10.0 -> 0.11.0 (ALTER EXTENSION queen_proxy UPDATE).
--
-- No change to the proxy's schema: the version follows the workspace's.
-- This file is frozen once shipped.
SELECT 1;
