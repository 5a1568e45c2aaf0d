//! Ack bodies and answers: one ack object, an array, or
//! `{"acknowledgments": [...], "consumerGroup": ...}`, read by a typed pass
//! (falling back to a checked one that names the ack at fault), and the
//! per-ack answers, written by hand beside their serde twin.

use std::borrow::Cow;

use serde_json::value::RawValue;
use serde_json::{json, Value};

use crate::pg::errors;
use crate::wire::json::{as_i64, check_name, parse_uuid, IdNum, Obj, MAX_NAME_BYTES};
use crate::wire::shape::Shape;
use crate::wire::QUEUE_MODE;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Completed,
    Failed,
    Retry,
    Dlq,
}

impl Status {
    /// The status a name stands for; None for no status.
    fn from_name(s: &str) -> Option<Status> {
        match s {
            // `acked` and `ok` are Queen's names for a completed message too.
            "completed" | "success" | "acked" | "ok" => Some(Status::Completed),
            "failed" => Some(Status::Failed),
            "retry" => Some(Status::Retry),
            "dlq" => Some(Status::Dlq),
            _ => None,
        }
    }
    fn parse(field: &str, s: &str) -> Status {
        Status::from_name(s).unwrap_or_else(|| {
            errors::invalid(
                field,
                format!("{s:?} is not one of completed, failed, retry, dlq"),
            )
        })
    }
    fn as_str(self) -> &'static str {
        match self {
            Status::Completed => "completed",
            Status::Failed => "failed",
            Status::Retry => "retry",
            Status::Dlq => "dlq",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct AckIn {
    pub index: usize,
    pub transaction_id: String,
    pub partition_id: i64,
    pub status: Status,
    pub lease_id: Option<uuid::Uuid>,
    pub group: String,
    pub error: Option<String>,
}

#[derive(Debug, Clone)]
pub struct AckOut {
    pub index: usize,
    pub transaction_id: String,
    pub partition_id: i64,
    pub status: Status,
    pub group: String,
    pub error: Option<String>,
    pub dead_lettered: bool,
    /// The offset the transaction id resolved to.
    pub offset: Option<i64>,
    /// Done, but not as asked (a dead-lettering whose message retention had
    /// already deleted).
    pub warning: Option<String>,
    /// This call answered the last open message of the lease, which ended.
    pub lease_released: bool,
}

impl AckOut {
    pub fn success(&self) -> bool {
        self.error.is_none()
    }
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self.answer()).expect("answers serialize")
    }

    /// The answer for this ack, borrowing its fields.
    pub fn answer(&self) -> AckAnswer<'_> {
        AckAnswer {
            index: self.index,
            transaction_id: &self.transaction_id,
            partition_id: IdNum(self.partition_id),
            status: self.status.as_str(),
            consumer_group: (self.group != QUEUE_MODE).then_some(self.group.as_str()),
            success: self.success(),
            error: self.error.as_deref(),
            lease_released: self.lease_released,
            dlq: self.dead_lettered,
            warning: self.warning.as_deref(),
        }
    }
}

/// One item of an ack answer.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AckAnswer<'a> {
    index: usize,
    transaction_id: &'a str,
    partition_id: IdNum,
    status: &'static str,
    consumer_group: Option<&'a str>,
    success: bool,
    error: Option<&'a str>,
    lease_released: bool,
    dlq: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    warning: Option<&'a str>,
}

/// Parses one ack object; `group` is the body-level consumer group.
pub fn parse_one(value: &Value, path: &str, index: usize, group: Option<&str>) -> AckIn {
    let o = Obj::new(value, path);
    let transaction_id = o.req_str("transactionId");
    if transaction_id.is_empty() {
        errors::invalid(&o.field("transactionId"), "must not be empty");
    }
    if transaction_id.len() > MAX_NAME_BYTES {
        errors::too_long(
            &o.field("transactionId"),
            transaction_id.len(),
            MAX_NAME_BYTES,
        );
    }
    let partition_id = match o.get("partitionId") {
        Some(v) => as_i64(&o.field("partitionId"), v),
        None => errors::invalid(&o.field("partitionId"), "is required"),
    };
    let status = Status::parse(
        &o.field("status"),
        o.opt_str("status").unwrap_or("completed"),
    );
    let lease_id = o
        .opt_str("leaseId")
        .filter(|s| !s.is_empty())
        .map(|s| parse_uuid(&o.field("leaseId"), s));
    let group = o
        .opt_str("consumerGroup")
        .or(group)
        .map(|g| check_name(&o.field("consumerGroup"), g))
        .unwrap_or(QUEUE_MODE)
        .to_owned();
    let error = o.opt_str("error").map(str::to_owned);
    AckIn {
        index,
        transaction_id: transaction_id.to_owned(),
        partition_id,
        status,
        lease_id,
        group,
        error,
    }
}

/// The fields of an ack, typed, borrowed from the body's text.
#[derive(serde::Deserialize)]
struct TypedAck<'a> {
    #[serde(borrow, rename = "transactionId")]
    transaction_id: Option<Cow<'a, str>>,
    #[serde(borrow, rename = "partitionId")]
    partition_id: Option<&'a RawValue>,
    #[serde(borrow)]
    status: Option<Cow<'a, str>>,
    #[serde(borrow, rename = "leaseId")]
    lease_id: Option<Cow<'a, str>>,
    #[serde(borrow, rename = "consumerGroup")]
    consumer_group: Option<Cow<'a, str>>,
    #[serde(borrow)]
    error: Option<Cow<'a, str>>,
}

#[derive(serde::Deserialize)]
struct TypedWrapper<'a> {
    #[serde(borrow)]
    acknowledgments: Vec<TypedAck<'a>>,
    #[serde(borrow, default, rename = "consumerGroup")]
    consumer_group: Option<Cow<'a, str>>,
}

/// Reads an ack body (an array of acks, or the `acknowledgments` wrapper)
/// in one typed pass, without building a value tree. None for anything it
/// does not take as it stands: the tree path then reads it, and names what
/// is wrong.
pub(crate) fn parse_typed(text: &str) -> Option<Vec<AckIn>> {
    let (items, group): (Vec<TypedAck>, Option<Cow<str>>) = match Shape::of(text.trim_start())? {
        Shape::Array => (serde_json::from_str(text).ok()?, None),
        Shape::Object => {
            let w: TypedWrapper = serde_json::from_str(text).ok()?;
            (w.acknowledgments, w.consumer_group)
        }
        Shape::Other => return None,
    };
    if items.is_empty() || items.len() > crate::pg::settings::ack_max_items() {
        return None;
    }
    items
        .into_iter()
        .enumerate()
        .map(|(index, a)| a.checked(index, group.as_deref()))
        .collect()
}

/// A name as the typed pass takes it: not empty, and not too long.
fn valid_name(s: &str) -> bool {
    !s.is_empty() && s.len() <= MAX_NAME_BYTES
}

/// A partition id as the typed pass takes it: a JSON integer, or a string
/// of one without escapes.
fn typed_partition_id(raw: &str) -> Option<i64> {
    match raw.strip_prefix('"') {
        Some(quoted) => quoted
            .strip_suffix('"')
            .filter(|d| !d.contains('\\'))?
            .parse::<i64>()
            .ok(),
        // serde_json reads -0 as a float, which the tree refuses.
        None if raw != "-0" => raw.parse::<i64>().ok(),
        None => None,
    }
}

impl TypedAck<'_> {
    /// The ack at `index`, checked; `group` is the body-level consumer group.
    /// None when the tree path has to read it.
    fn checked(self, index: usize, group: Option<&str>) -> Option<AckIn> {
        let transaction_id = self.transaction_id.filter(|t| valid_name(t))?.into_owned();
        let partition_id = typed_partition_id(self.partition_id?.get())?;
        let status = Status::from_name(self.status.as_deref().unwrap_or("completed"))?;
        let lease_id = match self.lease_id.as_deref().filter(|l| !l.is_empty()) {
            Some(l) => Some(uuid::Uuid::parse_str(l).ok()?),
            None => None,
        };
        let group = match self.consumer_group.as_deref().or(group) {
            Some(g) if valid_name(g) => g.to_owned(),
            Some(_) => return None,
            None => QUEUE_MODE.to_owned(),
        };
        let error = self.error.map(Cow::into_owned);
        Some(AckIn {
            index,
            transaction_id,
            partition_id,
            status,
            lease_id,
            group,
            error,
        })
    }
}

/// Parses an ack body given as JSON text; see `parse_acks`.
pub fn parse_acks_text(text: &str) -> Vec<AckIn> {
    if let Some(acks) = parse_typed(text) {
        return acks;
    }
    let body: Value = crate::wire::json::parse_value("acks", text);
    parse_acks(&body)
}

/// The answers of an ack as JSON text: the array `AckAnswer` serializes to,
/// written field by field.
pub fn answers_json(out: &[AckOut]) -> String {
    use crate::wire::json::{array_text, write_int, write_opt_str, write_str};
    let capacity = out
        .iter()
        .map(|o| 140 + o.transaction_id.len() + o.group.len())
        .sum();
    array_text(out, capacity, |text, o| {
        text.push_str("{\"index\":");
        write_int(text, o.index as i64);
        text.push_str(",\"transactionId\":");
        write_str(text, &o.transaction_id);
        text.push_str(",\"partitionId\":\"");
        write_int(text, o.partition_id);
        text.push_str("\",\"status\":\"");
        text.push_str(o.status.as_str());
        text.push_str("\",\"consumerGroup\":");
        write_opt_str(text, (o.group != QUEUE_MODE).then_some(o.group.as_str()));
        text.push_str(if o.success() {
            ",\"success\":true"
        } else {
            ",\"success\":false"
        });
        text.push_str(",\"error\":");
        write_opt_str(text, o.error.as_deref());
        text.push_str(if o.lease_released {
            ",\"leaseReleased\":true"
        } else {
            ",\"leaseReleased\":false"
        });
        text.push_str(if o.dead_lettered {
            ",\"dlq\":true"
        } else {
            ",\"dlq\":false"
        });
        if let Some(w) = &o.warning {
            text.push_str(",\"warning\":");
            write_str(text, w);
        }
        text.push('}');
    })
}

/// Parses an ack body: one ack object, an array of them, or
/// `{"acknowledgments": [...], "consumerGroup": ...}`.
pub fn parse_acks(body: &Value) -> Vec<AckIn> {
    let (items, group): (Vec<&Value>, Option<&str>) = match body {
        Value::Array(a) => (a.iter().collect(), None),
        Value::Object(m) if m.contains_key("acknowledgments") => {
            let o = Obj::new(body, "");
            let list = o
                .opt_array("acknowledgments")
                .unwrap_or_else(|| errors::invalid("acknowledgments", "is required"));
            let group = o.opt_str("consumerGroup");
            (list.iter().collect(), group)
        }
        Value::Object(_) => (vec![body], None),
        _ => errors::wrong_type("acks", "an ack object or an array of them"),
    };
    if items.is_empty() {
        errors::invalid("acknowledgments", "must not be empty");
    }
    let max = crate::pg::settings::ack_max_items();
    if items.len() > max {
        errors::invalid(
            "acknowledgments",
            format!(
                "{} acks is more than queen.ack_max_items ({max})",
                items.len()
            ),
        );
    }
    items
        .iter()
        .enumerate()
        .map(|(i, v)| parse_one(v, &format!("acknowledgments[{i}]"), i, group))
        .collect()
}

/// A lease renewal's arguments, checked: the lease id and the seconds
/// (None: each queue's lease time).
pub fn parse_renew(lease_id: &str, seconds: Option<i32>) -> uuid::Uuid {
    let id = parse_uuid("lease_id", lease_id);
    if let Some(s) = seconds {
        if s <= 0 {
            errors::invalid("seconds", format!("{s} must be at least 1"));
        }
    }
    id
}

/// What a lease renewal did.
pub struct Renewed {
    pub lease_id: uuid::Uuid,
    /// The cursors whose lease was extended.
    pub renewed: usize,
    /// The latest new expiry, in µs since the Unix epoch.
    pub expires_us: Option<i64>,
}

impl Renewed {
    /// The renewal's answer.
    pub fn to_json(&self) -> Value {
        let expires = self.expires_us.map(crate::pg::time::micros_to_iso);
        let mut v = json!({
            "leaseId": self.lease_id.to_string(),
            "success": self.renewed > 0,
            "renewed": self.renewed,
            "newExpiresAt": expires,
            "expiresAt": expires,
            "lease_expires_at": expires,
        });
        if self.renewed == 0 {
            v["error"] = Value::String(format!(
                "lease {} is not held (expired, released by an ack, or never existed)",
                self.lease_id
            ));
        }
        v
    }
}
