SELECT to_regclass('queen.queue_lag_metrics') IS NOT NULL
   AND to_regclass('queen.worker_metrics') IS NOT NULL
   AND to_regclass('queen.system_metrics') IS NOT NULL AS present
