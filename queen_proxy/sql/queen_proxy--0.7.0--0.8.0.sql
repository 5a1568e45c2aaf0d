-- queen_proxy 0.7.0 -> 0.8.0 (ALTER EXTENSION queen_proxy UPDATE).
--
-- No change to the proxy: the version follows the workspace's, which the
-- shards' extension moved (queen--0.7.0--0.8.0.sql). This file is frozen
-- once shipped.
SELECT 1;
