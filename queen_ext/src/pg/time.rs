//! Time as the engine answers it: microseconds since the Unix epoch, printed
//! as ISO 8601 in UTC with milliseconds.

/// Microseconds between the Unix epoch and PostgreSQL's (2000-01-01), which
/// PostgreSQL's own timestamps count from.
pub const PG_EPOCH_OFFSET_US: i64 = 946_684_800_000_000;

/// The epoch-microseconds form every query returns timestamps in.
pub fn micros_to_iso(us: i64) -> String {
    let secs = us.div_euclid(1_000_000);
    let millis = us.rem_euclid(1_000_000) / 1000;
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

/// Days since 1970-01-01 to a proleptic Gregorian (year, month, day).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// The current statement's start, in microseconds since the Unix epoch.
pub fn statement_start_us() -> i64 {
    (unsafe { pgrx::pg_sys::GetCurrentStatementStartTimestamp() }) + PG_EPOCH_OFFSET_US
}

/// Now by the system clock, in microseconds since the Unix epoch (0 if the
/// clock is before it).
pub fn wall_clock_us() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0)
}

/// Text read as a `timestamptz` the way PostgreSQL reads it (None: it
/// read as NULL).
pub fn timestamptz(text: &str) -> Option<pgrx::datum::TimestampWithTimeZone> {
    pgrx::spi::Spi::get_one_with_args::<pgrx::datum::TimestampWithTimeZone>(
        "SELECT $1::timestamptz",
        &[text.into()],
    )
    .ok()
    .flatten()
}

/// A timestamptz as microseconds since the Unix epoch; None for
/// `infinity` and `-infinity` (which no range or bucket can start from).
pub fn finite_unix_us(ts: pgrx::datum::TimestampWithTimeZone) -> Option<i64> {
    let pg_us: i64 = ts.into();
    if pg_us == i64::MAX || pg_us == i64::MIN {
        return None;
    }
    pg_us.checked_add(PG_EPOCH_OFFSET_US)
}

#[cfg(test)]
mod tests {
    #[test]
    fn iso_dates() {
        assert_eq!(super::micros_to_iso(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(
            super::micros_to_iso(1_700_000_000_123_456),
            "2023-11-14T22:13:20.123Z"
        );
        assert_eq!(
            super::micros_to_iso(951_782_400_000_000),
            "2000-02-29T00:00:00.000Z"
        );
    }
}
