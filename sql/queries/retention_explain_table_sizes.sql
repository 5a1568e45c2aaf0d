SELECT c.relname::text, pg_total_relation_size(c.oid)::int8, pg_table_size(c.oid)::int8, pg_indexes_size(c.oid)::int8
 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'queen' AND c.relkind = 'r'
ORDER BY 2 DESC LIMIT 20
