-- Whether this database's schema has the switches (0.3.0 and later).
SELECT to_regclass('queen.system_state') IS NOT NULL AS present
