-- Whether group $2 of queue $1 conflates; no row when it is not registered.
SELECT conflation FROM queen.consumer_groups WHERE queue_id = $1 AND consumer_group = $2
