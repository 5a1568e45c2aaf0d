SELECT pruned_failed_count FROM queen.queue_terminal_rollups WHERE queue_id = $1
