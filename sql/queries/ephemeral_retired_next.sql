-- The oldest ended incarnation no other session is cleaning.
SELECT incarnation AS incarnation
  FROM queen.ephemeral_retired
 ORDER BY incarnation
 LIMIT 1
   FOR UPDATE SKIP LOCKED
