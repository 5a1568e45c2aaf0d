//! The parameters of the status and analytics readers, as Queen's routes
//! take them: a time range (`from`, `to`), the queue filters, and the
//! bucket width the range implies. Each reader is given one JSON object of
//! the query's parameters as text; a bad one is refused naming it.

use pgrx::datum::TimestampWithTimeZone;
use serde_json::Value;

use crate::pg::errors;
use crate::pg::time::wall_clock_us;

/// One minute, in microseconds.
pub const MINUTE_US: i64 = 60_000_000;
/// One hour, in microseconds.
pub const HOUR_US: i64 = 60 * MINUTE_US;
/// How far back a range reaches when `from` is not given, for the status
/// and metrics readers (Queen: an hour).
pub const DEFAULT_SPAN_US: i64 = HOUR_US;
/// The same for the analytics reader (Queen: a day).
pub const ANALYTICS_SPAN_US: i64 = 24 * HOUR_US;
/// The rows a queue list answers when `limit` is not given (Queen: 100).
pub const DEFAULT_LIMIT: i64 = 100;
/// The most rows a queue list answers, whatever `limit` asks.
pub const MAX_LIMIT: i64 = queen_datum::limits::LIST_PAGE_MAX;
/// The widest range a reader accepts (a year): it bounds the buckets an
/// analytics answer fills.
pub const MAX_SPAN_US: i64 = 366 * 24 * HOUR_US;

/// A time range, both ends included.
#[derive(Debug, Clone, Copy)]
pub struct Range {
    pub from_us: i64,
    pub to_us: i64,
}

impl Range {
    pub fn from(&self) -> TimestampWithTimeZone {
        to_timestamptz(self.from_us)
    }
    pub fn to(&self) -> TimestampWithTimeZone {
        to_timestamptz(self.to_us)
    }
    /// The bucket width Queen's status uses for this range: up to an hour
    /// 1 minute, up to 6 hours 5, up to a day 15, up to a week 60, else 360.
    pub fn bucket_minutes(&self) -> i64 {
        let span = self.to_us - self.from_us;
        match span {
            s if s <= HOUR_US => 1,
            s if s <= 6 * HOUR_US => 5,
            s if s <= 24 * HOUR_US => 15,
            s if s <= 7 * 24 * HOUR_US => 60,
            _ => 360,
        }
    }
    /// `{"from", "to"}` as ISO 8601.
    pub fn json(&self) -> Value {
        serde_json::json!({
            "from": crate::pg::time::micros_to_iso(self.from_us),
            "to": crate::pg::time::micros_to_iso(self.to_us),
        })
    }
}

fn to_timestamptz(us: i64) -> TimestampWithTimeZone {
    let pg_us = us - crate::pg::time::PG_EPOCH_OFFSET_US;
    TimestampWithTimeZone::try_from(pg_us)
        .unwrap_or_else(|_| errors::invalid("from", "out of range"))
}

/// The query's parameters, as given.
pub struct Params(Value);

impl Params {
    /// Reads the parameters object (NULL or `{}`: none given).
    pub fn parse(text: Option<&str>) -> Params {
        Params::parse_named("params", text)
    }

    /// Reads the object of the argument named `arg` (NULL or `{}`: none
    /// given); an error names `arg`.
    pub fn parse_named(arg: &str, text: Option<&str>) -> Params {
        let v = match text {
            None => Value::Object(Default::default()),
            Some(t) => serde_json::from_str(t)
                .unwrap_or_else(|e| errors::invalid(arg, format!("not JSON: {e}"))),
        };
        if !v.is_object() {
            errors::wrong_type(arg, "an object");
        }
        Params(v)
    }

    /// A text parameter; absent, null or empty is none.
    pub fn text(&self, key: &str) -> Option<String> {
        match self.0.get(key) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) if s.is_empty() => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Number(n)) => Some(n.to_string()),
            Some(_) => errors::wrong_type(key, "a string"),
        }
    }

    /// A non-negative whole number; absent or empty is none.
    pub fn count(&self, key: &str) -> Option<i64> {
        let t = self.text(key)?;
        match t.parse::<i64>() {
            Ok(n) if n >= 0 => Some(n),
            _ => errors::invalid(key, format!("{t:?} is not a whole number of 0 or more")),
        }
    }

    /// A timestamp parameter, read as ISO 8601 in Rust (22023 naming the
    /// key otherwise).
    pub fn time(&self, key: &str) -> Option<i64> {
        let t = self.text(key)?;
        Some(crate::pg::time::filter_us(key, &t))
    }

    /// `from` and `to`: `to` defaults to now, `from` to `span_us` before
    /// `to`. `from` after `to`, or a range wider than [`MAX_SPAN_US`], is
    /// refused.
    pub fn range(&self, span_us: i64) -> Range {
        let to_us = self.time("to").unwrap_or_else(wall_clock_us);
        let from_us = match self.time("from") {
            Some(f) => f,
            None => to_us.saturating_sub(span_us),
        };
        if from_us > to_us {
            errors::invalid("from", "is after to");
        }
        if to_us.checked_sub(from_us).is_none_or(|w| w > MAX_SPAN_US) {
            errors::invalid("from", "the range is wider than a year");
        }
        Range { from_us, to_us }
    }

    /// `limit` (default [`DEFAULT_LIMIT`], at most [`MAX_LIMIT`]) and
    /// `offset` (default 0).
    pub fn page(&self) -> (i64, i64) {
        let limit = self.count("limit").unwrap_or(DEFAULT_LIMIT).min(MAX_LIMIT);
        (limit, self.count("offset").unwrap_or(0))
    }
}
