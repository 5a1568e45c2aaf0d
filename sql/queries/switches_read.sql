-- Every surface with a row, and whether it is paused.
SELECT key AS key, paused AS paused
  FROM queen.system_state
