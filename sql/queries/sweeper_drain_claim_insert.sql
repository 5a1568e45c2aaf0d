-- Claims the schedules $3 (message ids; their timer rows held locked) for
-- token $1 and $2 ms: each the next attempt of its schedule. Answers the
-- claimed ones (a claim numbered as one another sweeper just inserted is
-- left out).
INSERT INTO queen.log_timer_claims (message_id, attempt, token, claimed_until)
SELECT m.id, COALESCE((SELECT max(c.attempt) FROM queen.log_timer_claims c WHERE c.message_id = m.id), 0) + 1,
       $1, now() + make_interval(secs => $2 / 1000.0)
  FROM unnest($3::uuid[]) AS m(id)
ON CONFLICT DO NOTHING
RETURNING message_id
