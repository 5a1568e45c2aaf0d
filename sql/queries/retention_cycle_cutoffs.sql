SELECT now() - make_interval(days => $1) AS cleanup, now() - make_interval(days => $2) AS metrics
