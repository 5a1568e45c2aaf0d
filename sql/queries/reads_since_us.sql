SELECT (extract(epoch FROM $1::timestamptz) * 1000000)::int8 AS since_us
