SELECT queen_internal.log_retention_boundary_windowed_v1($1, $2, $3, NULL) AS boundary
