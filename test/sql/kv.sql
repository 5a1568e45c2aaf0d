-- KV: the batch call and the scalar conveniences, preconditions as
-- verdicts, required ops, quotas and usage; locks and semaphores. Versions
-- (and lock tokens) come from a sequence: shown only as how they compare.

-- One call, in order: each op sees the writes of those before it.
SELECT r->'success' AS success, r->'results' AS results FROM queen.kv('{"operations": [
    {"op": "put", "ns": "kv1", "key": "a", "value": {"state": "paid"}, "ttlSeconds": 3600},
    {"op": "putIfAbsent", "ns": "kv1", "key": "a", "value": "other", "ttlSeconds": 60},
    {"op": "putIfAbsent", "ns": "kv1", "key": "b", "value": [1, 2], "forever": true},
    {"op": "get", "ns": "kv1", "key": "a"},
    {"op": "get", "ns": "kv1", "key": "zz"},
    {"op": "incr", "ns": "kv1", "key": "n", "delta": 5, "ttlSeconds": 60},
    {"op": "incr", "ns": "kv1", "key": "n", "delta": 5, "max": 8, "ttlSeconds": 60},
    {"op": "check", "ns": "kv1", "key": "zz", "expect": 0},
    {"op": "check", "ns": "kv1", "key": "a", "expect": 0},
    {"op": "delete", "ns": "kv1", "key": "b"},
    {"op": "put", "ns": "kv1", "key": "p:1", "value": 1, "ttlSeconds": 60},
    {"op": "put", "ns": "kv1", "key": "p:2", "value": 2, "forever": true}]}') r \gset kv_
SELECT :'kv_success' AS success;
SELECT x.i - 1 AS idx, x.r->>'key' AS key, x.r->'applied' AS applied, x.r->'found' AS found,
       x.r->'value' AS value, x.r->>'reason' AS reason
  FROM json_array_elements(:'kv_results'::json) WITH ORDINALITY x(r, i);
-- getMany and getPrefix: rows (key, value), what is missing, and paging.
SELECT (SELECT jsonb_agg(jsonb_build_object('key', r->'key', 'value', r->'value'))
          FROM json_array_elements(x->'rows') r) AS rows,
       x->'missing' AS missing, x->'truncated' AS truncated
  FROM json_array_elements(queen.kv('{"operations": [
    {"op": "getMany", "ns": "kv1", "keys": ["a", "n", "b"]}]}')->'results') x;
SELECT (SELECT jsonb_agg(jsonb_build_object('key', r->'key', 'value', r->'value'))
          FROM json_array_elements(x->'rows') r) AS rows,
       x->'truncated' AS truncated, x->'nextAfter' AS next_after
  FROM json_array_elements(queen.kv('{"operations": [
    {"op": "getPrefix", "ns": "kv1", "prefix": "p:"}]}')->'results') x;
-- What a read answers besides the value; a key that lives forever.
SELECT (SELECT json_agg(e.key ORDER BY e.key) FROM json_each(x) e) AS fields,
       x->>'expiresAt' AS expires_at
  FROM json_array_elements(queen.kv('[{"op": "get", "ns": "kv1", "key": "p:2"}]')->'results') x;

-- The scalar functions.
SELECT queen.kv_get('kv1', 'a') AS a, queen.kv_get('kv1', 'b') AS b;
SELECT queen.kv_get('kv1', 'zz') IS NULL AS absent_is_null,
       queen.kv_get('kv1', NULL) IS NULL AS strict;
SELECT (s::jsonb) - 'version' - 'expiresAt' AS set FROM queen.kv_set('kv1', 's', '"one"', 60) s;
SELECT queen.kv_get('kv1', 's') AS s;
SELECT (r->'results'->0->>'version')::int8 AS v
  FROM queen.kv('[{"op": "get", "ns": "kv1", "key": "s"}]') r \gset
SELECT (c::jsonb) - 'version' - 'expiresAt' AS wrong_version
  FROM queen.kv_cas('kv1', 's', :v + 1000, '"two"', 60) c;
SELECT (c::jsonb) - 'version' - 'expiresAt' AS cas, (c->>'version')::int8 > :v AS version_rose
  FROM queen.kv_cas('kv1', 's', :v, '"two"', NULL, true) c;
SELECT queen.kv_get('kv1', 's') AS s;
SELECT (i::jsonb) - 'version' - 'expiresAt' AS incr FROM queen.kv_incr('kv1', 'counter', 2, 60) i;
SELECT (i::jsonb) - 'version' - 'expiresAt' AS incr FROM queen.kv_incr('kv1', 'counter', 1, 60) i;
SELECT regress.err($$SELECT queen.kv_incr('kv1', 'counter')$$) AS no_expiry;
SELECT (i::jsonb) - 'version' - 'expiresAt' AS over_max
  FROM queen.kv_incr('kv1', 'counter', 10, 60, false, 5) i;
SELECT (d::jsonb) - 'version' AS deleted FROM queen.kv_delete('kv1', 's') d;
SELECT (d::jsonb) - 'version' AS again FROM queen.kv_delete('kv1', 's') d;
SELECT queen.kv_get('kv1', 's') AS s;

-- A required op that loses its precondition: nothing of the call is written.
SELECT (r::jsonb) - 'results' - 'version' AS verdict FROM queen.kv('{"operations": [
    {"op": "put", "ns": "kv1", "key": "c", "value": 1, "ttlSeconds": 60},
    {"op": "put", "ns": "kv1", "key": "a", "value": 2, "ttlSeconds": 60, "expect": 0,
        "required": true}]}') r;
SELECT queen.kv_get('kv1', 'c') AS c;

-- Quota and usage: a write past the quota is refused (53400).
SELECT (q::jsonb) AS quota FROM queen.kv_quota('kv_small', 2, NULL) q;
SELECT x->'applied' AS applied
  FROM json_array_elements(queen.kv('{"operations": [
    {"op": "put", "ns": "kv_small", "key": "k1", "value": 1, "ttlSeconds": 60},
    {"op": "put", "ns": "kv_small", "key": "k2", "value": 2, "ttlSeconds": 60}]}')->'results') x;
SELECT queen_internal.kv_usage_rollup_v1() IS NOT NULL AS rolled_up;
SELECT regress.err($$SELECT queen.kv_set('kv_small', 'k3', '3', 60)$$) AS over_quota;
SELECT regress.err($$SELECT queen.kv_set('kv_small', 'k1', '4', 60)$$) AS overwrite;
SELECT u->>'ns' AS ns, u->'keys' AS keys, u->'maxKeys' AS max_keys, u->'maxBytes' AS max_bytes
  FROM json_array_elements(queen.kv_usage('kv_small')->'namespaces') u;
SELECT (q::jsonb) AS removed FROM queen.kv_quota('kv_small', NULL, NULL) q;
SELECT regress.err($$SELECT queen.kv_set('kv_small', 'k3', '3', 60)$$) AS without_quota;

-- Locks: acquire, the same owner again, a second owner, renew, release.
SELECT queen.locks('{"operations": [
    {"op": "acquire", "name": "report", "ttlSeconds": 30, "owner": "w1"}]}')->'results'->0
        AS a \gset
SELECT (:'a'::jsonb) - 'token' - 'guard' - 'expiresAt' AS acquired,
       ((:'a'::jsonb)->'guard') - 'expect' AS guard;
SELECT (x::jsonb) - 'token' - 'guard' - 'expiresAt' AS again
  FROM json_array_elements(queen.locks('{"operations": [
    {"op": "acquire", "name": "report", "ttlSeconds": 30, "owner": "w1"}]}')->'results') x;
SELECT x->'acquired' AS acquired, x->>'reason' AS reason,
       (SELECT json_agg(h->>'owner') FROM json_array_elements(x->'holders') h) AS holders
  FROM json_array_elements(queen.locks('{"operations": [
    {"op": "acquire", "name": "report", "ttlSeconds": 30, "owner": "w2"}]}')->'results') x;
SELECT x->'renewed' AS renewed, (x->>'token')::int8 > (:'a'::json->>'token')::int8 AS token_rose,
       x->>'token' AS new_token
  FROM json_array_elements(queen.locks(jsonb_build_object('operations', jsonb_build_array(
    jsonb_build_object('op', 'renew', 'name', 'report', 'token', (:'a'::json->'token'),
                       'ttlSeconds', 30))))->'results') x \gset
SELECT :'renewed' AS renewed, :'token_rose' AS token_rose;
-- The old token no longer renews or releases.
SELECT (x::jsonb) - 'token' - 'expiresAt' AS old_token
  FROM json_array_elements(queen.locks(jsonb_build_object('operations', jsonb_build_array(
    jsonb_build_object('op', 'release', 'name', 'report', 'token',
        (:'a'::json->'token')))))->'results') x;
SELECT (x::jsonb) - 'token' - 'expiresAt' AS released
  FROM json_array_elements(queen.locks(jsonb_build_object('operations', jsonb_build_array(
    jsonb_build_object('op', 'release', 'name', 'report', 'token',
        :'new_token'::int8))))->'results') x;
SELECT (x::jsonb) - 'token' - 'expiresAt' AS got
  FROM json_array_elements(queen.locks('{"operations": [{"op": "get",
      "name": "report"}]}')->'results') x;
-- A semaphore of two permits.
SELECT x->'acquired' AS acquired, x->'slot' AS slot, x->>'owner' AS owner, x->>'reason' AS reason
  FROM json_array_elements(queen.locks('{"operations": [
    {"op": "acquire", "name": "pool", "ttlSeconds": 30, "owner": "a", "limit": 2},
    {"op": "acquire", "name": "pool", "ttlSeconds": 30, "owner": "b", "limit": 2},
    {"op": "acquire", "name": "pool", "ttlSeconds": 30, "owner": "c", "limit": 2}]}')->'results') x;
