//! Time as the engine answers it: microseconds since the Unix epoch, printed
//! as ISO 8601 in UTC with milliseconds.

/// Microseconds between the Unix epoch and PostgreSQL's (2000-01-01), which
/// PostgreSQL's own timestamps count from.
pub const PG_EPOCH_OFFSET_US: i64 = 946_684_800_000_000;

/// A timestamp that may be absent, as JSON: its ISO form, or null.
pub fn micros_to_iso_or_null(us: Option<i64>) -> serde_json::Value {
    us.map_or(serde_json::Value::Null, |us| {
        serde_json::Value::String(micros_to_iso(us))
    })
}

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

/// Days from 1970-01-01 to a proleptic Gregorian date.
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (m as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// A run of exactly `n` ASCII digits at the front of `s`, and the rest.
fn digits(s: &str, n: usize) -> Option<(i64, &str)> {
    let head = s.get(..n)?;
    if !head.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((head.parse().ok()?, &s[n..]))
}

/// An ISO 8601 timestamp as microseconds since the Unix epoch: a date
/// `YYYY-MM-DD`, optionally followed by `T` (or a space) and `HH:MM`,
/// `HH:MM:SS` or `HH:MM:SS.fraction`, and then `Z` or an offset `±HH:MM`
/// (`±HHMM`, `±HH`); without an offset the time is UTC. None for anything
/// else, PostgreSQL's words (`now`, `yesterday`, `infinity`) included: the
/// filters of the listings read timestamps here, not in SQL.
pub fn parse_iso_us(text: &str) -> Option<i64> {
    let (days, mut r) = iso_date(text.trim())?;
    let mut secs = days * 86_400;
    let mut micros = 0i64;
    if let Some(rest) = r
        .strip_prefix('T')
        .or_else(|| r.strip_prefix('t'))
        .or_else(|| r.strip_prefix(' '))
    {
        let (s, us, rest) = iso_time(rest)?;
        secs += s;
        micros = us;
        r = rest;
    }
    let offset = iso_offset(r)?;
    (secs - offset).checked_mul(1_000_000)?.checked_add(micros)
}

/// A date `YYYY-MM-DD` at the front of `t` as days since 1970-01-01, and
/// the rest; None for a date that does not exist.
fn iso_date(t: &str) -> Option<(i64, &str)> {
    let (y, r) = digits(t, 4)?;
    let r = r.strip_prefix('-')?;
    let (mo, r) = digits(r, 2)?;
    let r = r.strip_prefix('-')?;
    let (d, r) = digits(r, 2)?;
    let (mo, d) = (mo as u32, d as u32);
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let month_days = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    if !(1..=12).contains(&mo) || d < 1 || d > month_days[mo as usize - 1] {
        return None;
    }
    Some((days_from_civil(y, mo, d), r))
}

/// A time `HH:MM`, `HH:MM:SS` or `HH:MM:SS.fraction` at the front of `t`
/// as (seconds into the day, microseconds), and the rest.
fn iso_time(t: &str) -> Option<(i64, i64, &str)> {
    let (h, rest) = digits(t, 2)?;
    let rest = rest.strip_prefix(':')?;
    let (mi, mut rest) = digits(rest, 2)?;
    let mut s = 0;
    let mut micros = 0i64;
    if let Some(more) = rest.strip_prefix(':') {
        let (sec, more) = digits(more, 2)?;
        s = sec;
        rest = more;
        if let Some(frac) = rest.strip_prefix('.').or_else(|| rest.strip_prefix(',')) {
            let n = frac.bytes().take_while(u8::is_ascii_digit).count();
            if n == 0 {
                return None;
            }
            let kept = &frac[..n.min(6)];
            micros = kept.parse::<i64>().ok()? * 10i64.pow(6 - kept.len() as u32);
            rest = &frac[n..];
        }
    }
    if h > 23 || mi > 59 || s > 59 {
        return None;
    }
    Some((h * 3600 + mi * 60 + s, micros, rest))
}

/// The offset the timestamp ends with, in seconds east of UTC: none, `Z`,
/// or `±HH:MM` (`±HHMM`, `±HH`) and nothing after it.
fn iso_offset(r: &str) -> Option<i64> {
    if matches!(r, "" | "Z" | "z") {
        return Some(0);
    }
    let sign = match r.as_bytes()[0] {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let (oh, rest) = digits(&r[1..], 2)?;
    let rest = rest.strip_prefix(':').unwrap_or(rest);
    let om = if rest.is_empty() {
        0
    } else {
        let (om, rest) = digits(rest, 2)?;
        if !rest.is_empty() {
            return None;
        }
        om
    };
    if oh > 23 || om > 59 {
        return None;
    }
    Some(sign * (oh * 3600 + om * 60))
}

/// A timestamp filter `field` as microseconds since the Unix epoch; a text
/// that is not an ISO 8601 timestamp is refused (22023, naming the field).
pub fn filter_us(field: &str, text: &str) -> i64 {
    if matches!(text.trim(), "infinity" | "+infinity" | "-infinity") {
        crate::pg::errors::invalid(field, format!("{text:?} is not a finite timestamp"));
    }
    parse_iso_us(text).unwrap_or_else(|| {
        crate::pg::errors::invalid(
            field,
            format!("{text:?} is not an ISO 8601 timestamp (such as 2026-01-31T12:00:00Z)"),
        )
    })
}

/// Microseconds since the Unix epoch as a `timestamptz`; a value outside
/// PostgreSQL's range is refused (22023, naming the field).
pub fn us_to_timestamptz(field: &str, us: i64) -> pgrx::datum::TimestampWithTimeZone {
    us.checked_sub(PG_EPOCH_OFFSET_US)
        .and_then(|pg| pgrx::datum::TimestampWithTimeZone::try_from(pg).ok())
        .unwrap_or_else(|| crate::pg::errors::invalid(field, format!("{us} is out of range")))
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
    fn iso_text_is_read_in_rust() {
        use super::parse_iso_us as p;
        assert_eq!(p("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(p("2023-11-14T22:13:20.123Z"), Some(1_700_000_000_123_000));
        assert_eq!(
            p("2023-11-14 23:13:20.123456+01:00"),
            Some(1_700_000_000_123_456)
        );
        assert_eq!(p("2023-11-14T22:13:20"), Some(1_700_000_000_000_000));
        assert_eq!(
            p("2023-11-14T22:13-0130"),
            Some(1_700_000_000_000_000 - 20 * 1_000_000 + 5_400_000_000)
        );
        assert_eq!(p("2024-02-29"), Some(1_709_164_800_000_000));
        for bad in [
            "yesterday",
            "now",
            "infinity",
            "2023-02-29",
            "2023-13-01",
            "2023-11-14T25:00",
            "2023-11-14T22:13:20.Z",
            "2023-11-14X",
            "",
            "20231114",
        ] {
            assert_eq!(p(bad), None, "{bad}");
        }
    }

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
