-- queen: key/value rows, their usage and quotas.

-- Key/value state: (ns, key) rows with a JSON value and a mandatory expiry
-- ('infinity' when the writer declared forever). Versions come from one
-- sequence, so a key's version only rises, across deletes too: a lock's
-- fencing token is its row's version. Reads go through kv_live_v1, which
-- hides a row from the first read after its expiry instant; the sweepers
-- delete expired rows later (queen.kv_expire_every_ms), which only costs
-- table size, and count the expired-but-present rows on every pass.
CREATE SEQUENCE queen.kv_version_seq;
CREATE TABLE queen.kv (
    ns          text COLLATE "C" NOT NULL,
    key         text COLLATE "C" NOT NULL,
    value       jsonb NOT NULL,
    version     bigint NOT NULL,
    expires_at  timestamptz NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    shard       smallint GENERATED ALWAYS AS ((hashtextextended(ns || '/' || key, 0) & 63)::smallint) STORED,
    PRIMARY KEY (ns, key)
) WITH (
    -- Keys churn; truncation's ACCESS EXCLUSIVE would stall every read and
    -- write. The price: the heap never gives pages back, so an unpruned
    -- peak is permanent, which is why the prune counts what it leaves.
    vacuum_truncate = off,
    autovacuum_vacuum_scale_factor = 0.05,
    autovacuum_vacuum_cost_delay = 0
);
-- The prune's and the expired count's 64 per-shard seeks. Keys that live
-- forever are not in it.
CREATE INDEX idx_kv_expiry ON queen.kv (shard, expires_at) WHERE expires_at < 'infinity';

CREATE VIEW queen.kv_live_v1 AS
SELECT ns, key, value, version,
       CASE WHEN expires_at = 'infinity' THEN NULL ELSE expires_at END AS expires_at,
       created_at, updated_at
  FROM queen.kv
 WHERE expires_at > statement_timestamp();

-- Per-namespace usage, written by the sweepers' rollup
-- (queen.kv_usage_every_ms); a gauge, not a ledger.
CREATE TABLE queen.kv_usage (
    ns              text COLLATE "C" PRIMARY KEY,
    keys            bigint NOT NULL,
    bytes           bigint NOT NULL,
    expired_present bigint NOT NULL DEFAULT 0,
    rolled_up_at    timestamptz NOT NULL
);

-- Per-namespace limits: a write that would take a namespace past either is
-- refused (SQLSTATE 53400). NULL: no limit of that kind.
CREATE TABLE queen.kv_quota (
    ns          text COLLATE "C" PRIMARY KEY,
    max_keys    bigint CHECK (max_keys >= 0),
    max_bytes   bigint CHECK (max_bytes >= 0),
    updated_at  timestamptz NOT NULL DEFAULT now()
);
