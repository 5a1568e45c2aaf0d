-- How far the floors of the due scan may rise (timers/floors.rs). A
-- schedule takes a transaction id first and then reads its due instant no
-- earlier than the clock (timers_upsert_log.sql). So a timer row that the
-- scan after this statement can not see yet is due no earlier than the
-- start of a transaction of this database that holds an id now, or than
-- now. A prepared transaction's start is not known, and a session whose
-- start this role may not read is not either: then the floors stay
-- (cap_us NULL).
SELECT CASE WHEN bool_or(a.xact_start IS NULL)
              OR EXISTS (SELECT 1 FROM pg_catalog.pg_prepared_xacts p WHERE p.database = current_database())
            THEN NULL
            ELSE (extract(epoch FROM min(a.xact_start)) * 1000000)::int8 END AS cap_us
  FROM (SELECT xact_start FROM pg_catalog.pg_stat_activity
         WHERE datname = current_database() AND backend_xid IS NOT NULL
        UNION ALL SELECT clock_timestamp()) a
