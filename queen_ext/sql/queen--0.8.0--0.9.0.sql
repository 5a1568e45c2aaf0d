-- queen 0.8.0 -> 0.9.0 (ALTER EXTENSION queen UPDATE).
--
-- 0.9.0 keeps an ephemeral queue's leases as versions, as its tallies,
-- bounds and cursors already are: a delivery, a hand-back and a settlement
-- each write a new row, and the newest is the lease's state; the message
-- path updates and deletes no row of an ephemeral queue, and the retention
-- cycle deletes what it leaves behind. A lease held when the update runs
-- becomes its version 0, as it was. The update takes the table's lock for
-- a moment; an ephemeral call waits for it. This file is frozen once
-- shipped.

ALTER TABLE queen.ephemeral_leases ADD COLUMN ver integer NOT NULL DEFAULT 0;
ALTER TABLE queen.ephemeral_leases ALTER COLUMN ver DROP DEFAULT;
ALTER TABLE queen.ephemeral_leases DROP CONSTRAINT ephemeral_leases_pkey;
ALTER TABLE queen.ephemeral_leases
    ADD CONSTRAINT ephemeral_leases_pkey PRIMARY KEY (incarnation, partition, grp, seq, ver);
