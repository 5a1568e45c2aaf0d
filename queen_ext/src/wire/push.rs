//! Push bodies and answers: Queen's JSON push items (as text, or already
//! parsed inside a transaction) checked and grouped by partition, and the
//! per-item answers, written by hand beside their serde twin.

use std::borrow::Cow;
use std::collections::HashMap;
use std::rc::Rc;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

use crate::pg::errors;
use crate::wire::json::{check_name, IdNum, IdOut, MAX_NAME_BYTES};
use crate::wire::shape::Shape;
use crate::wire::DEFAULT_PARTITION;

/// One message to push.
#[derive(Debug, Clone)]
pub struct ItemIn {
    /// Its place in the caller's request; answers come back in this order.
    pub index: usize,
    /// The caller's transaction id; `None` mints one from the message id.
    pub txn: Option<String>,
    pub trace: Option<[u8; 16]>,
    /// One JSON document.
    pub payload: Vec<u8>,
    pub encrypted: bool,
    /// The id a client minted in a pre-packed frame; `None` mints one here.
    pub message_id: Option<[u8; 16]>,
}

/// Messages for one partition.
#[derive(Debug, Clone)]
pub struct GroupIn {
    pub queue: String,
    pub partition: String,
    pub items: Vec<ItemIn>,
    /// The client's own zstd frame holding exactly `items` (binary push,
    /// flag 8), stored as it is when nothing in it has to change.
    pub packed: Option<Vec<u8>>,
}

#[derive(Debug, Clone)]
pub struct ItemOut {
    pub index: usize,
    /// Shared by every item of its group.
    pub queue: Rc<str>,
    pub partition: Rc<str>,
    pub partition_id: i64,
    pub message_id: Option<[u8; 16]>,
    pub transaction_id: String,
    pub offset: Option<i64>,
    pub duplicate: bool,
}

impl ItemOut {
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self.answer()).expect("answers serialize")
    }

    pub fn answer(&self) -> PushAnswer<'_> {
        PushAnswer {
            index: self.index,
            queue: &self.queue,
            partition: &self.partition,
            partition_id: IdNum(self.partition_id),
            transaction_id: &self.transaction_id,
            message_id: self.message_id.as_ref().map(IdOut::of),
            offset: self.offset,
            message_id_snake: self.message_id.as_ref().map(IdOut::of),
            transaction_id_snake: &self.transaction_id,
            queue_name: &self.queue,
            status: if self.duplicate {
                "duplicate"
            } else {
                "queued"
            },
        }
    }
}

/// The answers of a push as JSON text: the array `PushAnswer` serializes to,
/// written field by field (a push of a thousand items answers a thousand
/// objects, and serde's map machinery was a tenth of the push).
pub fn answers_json(out: &[ItemOut]) -> String {
    use crate::wire::json::{array_text, write_int, write_opt_id, write_str};
    let capacity = out
        .iter()
        .map(|o| 260 + 2 * (o.queue.len() + o.transaction_id.len()) + o.partition.len())
        .sum();
    array_text(out, capacity, |text, o| {
        text.push_str("{\"index\":");
        write_int(text, o.index as i64);
        text.push_str(",\"queue\":");
        write_str(text, &o.queue);
        text.push_str(",\"partition\":");
        write_str(text, &o.partition);
        text.push_str(",\"partitionId\":\"");
        write_int(text, o.partition_id);
        text.push_str("\",\"transactionId\":");
        write_str(text, &o.transaction_id);
        text.push_str(",\"messageId\":");
        write_opt_id(text, o.message_id.as_ref());
        text.push_str(",\"offset\":");
        match o.offset {
            Some(n) => write_int(text, n),
            None => text.push_str("null"),
        }
        text.push_str(",\"message_id\":");
        write_opt_id(text, o.message_id.as_ref());
        text.push_str(",\"transaction_id\":");
        write_str(text, &o.transaction_id);
        text.push_str(",\"queueName\":");
        write_str(text, &o.queue);
        text.push_str(if o.duplicate {
            ",\"status\":\"duplicate\"}"
        } else {
            ",\"status\":\"queued\"}"
        });
    })
}

/// One item of a push answer; `message_id`, `transaction_id` and
/// `queueName` repeat three of its fields under the names Queen's server
/// answers them with.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PushAnswer<'a> {
    index: usize,
    queue: &'a str,
    partition: &'a str,
    partition_id: IdNum,
    transaction_id: &'a str,
    message_id: Option<IdOut>,
    offset: Option<i64>,
    #[serde(rename = "message_id")]
    message_id_snake: Option<IdOut>,
    #[serde(rename = "transaction_id")]
    transaction_id_snake: &'a str,
    queue_name: &'a str,
    status: &'static str,
}

/// The fields of a push item, still as raw JSON.
#[derive(Deserialize)]
struct RawItem<'a> {
    #[serde(borrow, default)]
    queue: Option<&'a RawValue>,
    #[serde(borrow, default)]
    partition: Option<&'a RawValue>,
    #[serde(borrow, default)]
    payload: Option<&'a RawValue>,
    #[serde(borrow, default, rename = "transactionId")]
    transaction_id: Option<&'a RawValue>,
    #[serde(borrow, default, rename = "traceId")]
    trace_id: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Wrapper<'a> {
    #[serde(borrow, default)]
    items: Option<Vec<&'a RawValue>>,
}

/// A raw JSON string's text; `field` names it only in an error.
fn raw_str<'a>(field: impl FnOnce() -> String, raw: &'a RawValue) -> Cow<'a, str> {
    let text = raw.get();
    // The common case, a string without escapes, borrows its bytes as they are.
    if text.len() >= 2
        && text.starts_with('"')
        && text.ends_with('"')
        && !text[1..text.len() - 1].contains(['\\', '"'])
    {
        return Cow::Borrowed(&text[1..text.len() - 1]);
    }
    serde_json::from_str::<Cow<'a, str>>(text)
        .unwrap_or_else(|_| errors::wrong_type(&field(), "a string"))
}

#[derive(Deserialize)]
struct ItemsWrapper<'a> {
    #[serde(borrow, default)]
    items: Option<Vec<RawItem<'a>>>,
}

/// The items of a push body, each still raw, with an error naming what is
/// wrong with the body itself.
fn raw_items(body: &str) -> Vec<&RawValue> {
    match Shape::of(body.trim_start()) {
        Some(Shape::Array) => serde_json::from_str(body)
            .unwrap_or_else(|e| errors::invalid("items", format!("malformed JSON: {e}"))),
        Some(Shape::Object) => serde_json::from_str::<Wrapper>(body)
            .unwrap_or_else(|e| errors::invalid("items", format!("malformed JSON: {e}")))
            .items
            .unwrap_or_else(|| errors::invalid("items", "is required")),
        _ => errors::wrong_type("items", "an array of items"),
    }
}

/// Parses Queen's push body (JSON text): an array of items, or
/// `{"items": [...]}`. Items of one (queue, partition) form one group, in
/// their order.
pub fn parse_items(body: &str) -> Vec<GroupIn> {
    // One pass reads every item's fields; a body it refuses is read again
    // item by item, to name the item at fault.
    let items = one_pass(body).unwrap_or_else(|| item_by_item(body));
    group_items(items)
}

/// Every item's fields, read in one pass over the body; None for a body
/// that pass does not take.
fn one_pass(body: &str) -> Option<Vec<RawItem<'_>>> {
    match Shape::of(body.trim_start())? {
        Shape::Array => serde_json::from_str(body).ok(),
        Shape::Object => serde_json::from_str::<ItemsWrapper>(body)
            .ok()
            .and_then(|w| w.items),
        Shape::Other => None,
    }
}

/// Every item's fields, read one item at a time, with an error naming the
/// first item that is not an object of them.
fn item_by_item(body: &str) -> Vec<RawItem<'_>> {
    raw_items(body)
        .iter()
        .enumerate()
        .map(|(index, raw)| {
            if Shape::of(raw.get()) != Some(Shape::Object) {
                errors::wrong_type(&format!("items[{index}]"), "a JSON object");
            }
            serde_json::from_str(raw.get())
                .unwrap_or_else(|e| errors::invalid(&format!("items[{index}]"), e))
        })
        .collect()
}

/// The push items of a transaction's operations, already parsed: the same
/// checks, errors and groups as [`parse_items`] over the same items as text.
pub fn items_from_values(items: &[Value]) -> Vec<GroupIn> {
    match items
        .iter()
        .map(Value::as_object)
        .collect::<Option<Vec<_>>>()
    {
        Some(objects) => group_items(objects),
        // An item that is not an object is read as the text path reads it
        // (a short array by position, anything else refused), from its text.
        None => parse_items(&serde_json::to_string(items).expect("items serialize")),
    }
}

/// Where a push item's fields are read from: the raw text of a body, or an
/// already parsed object. A field sent as null is a field not sent.
trait ItemSource<'a> {
    /// A string field's text; `field` names it only in an error.
    fn text(&self, key: &str, field: impl FnOnce() -> String) -> Option<Cow<'a, str>>;
    /// The payload's JSON text (`null` when absent).
    fn payload(&self) -> Vec<u8>;
}

impl<'a> ItemSource<'a> for RawItem<'a> {
    fn text(&self, key: &str, field: impl FnOnce() -> String) -> Option<Cow<'a, str>> {
        let raw = match key {
            "queue" => self.queue,
            "partition" => self.partition,
            "transactionId" => self.transaction_id,
            _ => self.trace_id,
        };
        raw.map(|r| raw_str(field, r))
    }

    fn payload(&self) -> Vec<u8> {
        self.payload
            .map_or_else(|| b"null".to_vec(), |p| p.get().as_bytes().to_vec())
    }
}

impl<'a> ItemSource<'a> for &'a serde_json::Map<String, Value> {
    fn text(&self, key: &str, field: impl FnOnce() -> String) -> Option<Cow<'a, str>> {
        match self.get(key) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(Cow::Borrowed(s.as_str())),
            Some(_) => errors::wrong_type(&field(), "a string"),
        }
    }

    fn payload(&self) -> Vec<u8> {
        match self.get("payload") {
            None | Some(Value::Null) => b"null".to_vec(),
            Some(v) => serde_json::to_vec(v).expect("a JSON value serializes"),
        }
    }
}

/// Checks the items and groups them: items of one (queue, partition) form
/// one group, in their order.
fn group_items<'a, S: ItemSource<'a>>(items: Vec<S>) -> Vec<GroupIn> {
    check_count(items.len());
    let mut groups = Groups::default();
    for (index, item) in items.into_iter().enumerate() {
        let (queue, partition, item) = checked_item(index, &item);
        groups.add(queue, &partition, item);
    }
    groups.list
}

/// Refuses a push of no items, or of more than `queen.push_max_items`.
fn check_count(len: usize) {
    if len == 0 {
        errors::invalid("items", "must not be empty");
    }
    let max = crate::pg::settings::push_max_items();
    if len > max {
        errors::invalid(
            "items",
            format!("{len} items is more than queen.push_max_items ({max})"),
        );
    }
}

/// One item's fields, checked, with errors naming `items[index]`: its
/// queue, its partition and what is pushed.
fn checked_item<'a, S: ItemSource<'a>>(
    index: usize,
    item: &S,
) -> (Cow<'a, str>, Cow<'a, str>, ItemIn) {
    // Error paths are built only when an error is raised.
    let field = |name: &str| format!("items[{index}].{name}");
    let queue = match item.text("queue", || field("queue")) {
        Some(q) => q,
        None => errors::invalid(&field("queue"), "is required"),
    };
    if queue.is_empty() || queue.len() > MAX_NAME_BYTES {
        check_name(&field("queue"), &queue);
    }
    let partition = item
        .text("partition", || field("partition"))
        .unwrap_or(Cow::Borrowed(DEFAULT_PARTITION));
    if partition.is_empty() || partition.len() > MAX_NAME_BYTES {
        check_name(&field("partition"), &partition);
    }
    let txn = item
        .text("transactionId", || field("transactionId"))
        .filter(|t| !t.is_empty())
        .map(|t| {
            if t.len() > MAX_NAME_BYTES {
                errors::too_long(&field("transactionId"), t.len(), MAX_NAME_BYTES);
            }
            t.into_owned()
        });
    let trace = item
        .text("traceId", || field("traceId"))
        .filter(|t| !t.is_empty())
        .map(|t| *crate::wire::json::parse_uuid(&field("traceId"), &t).as_bytes());
    let payload = item.payload();
    let item = ItemIn {
        index,
        txn,
        trace,
        payload,
        encrypted: false,
        message_id: None,
    };
    (queue, partition, item)
}

/// The groups of a push as its items are added, with where each
/// (queue, partition) has its group.
#[derive(Default)]
struct Groups {
    list: Vec<GroupIn>,
    at: HashMap<(String, String), usize>,
}

impl Groups {
    /// Adds an item to the group of its (queue, partition).
    fn add(&mut self, queue: Cow<'_, str>, partition: &str, item: ItemIn) {
        // Items of one partition usually come together: try the last group first.
        let slot = match self.list.last() {
            Some(g) if g.queue == *queue && g.partition == partition => self.list.len() - 1,
            _ => self.slot((queue.into_owned(), partition.to_owned())),
        };
        self.list[slot].items.push(item);
    }

    /// Where the group of a (queue, partition) is, opened when it has none.
    fn slot(&mut self, key: (String, String)) -> usize {
        if let Some(slot) = self.at.get(&key) {
            return *slot;
        }
        self.list.push(GroupIn {
            queue: key.0.clone(),
            partition: key.1.clone(),
            items: Vec::new(),
            packed: None,
        });
        self.at.insert(key, self.list.len() - 1);
        self.list.len() - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_answers_are_what_the_answer_struct_serializes() {
        let item =
            |index, queue: &str, txn: &str, id: Option<[u8; 16]>, offset, duplicate| ItemOut {
                index,
                queue: queue.into(),
                partition: "p \"1\"".into(),
                partition_id: i64::MAX,
                message_id: id,
                transaction_id: txn.to_owned(),
                offset,
                duplicate,
            };
        let out = vec![
            item(0, "orders", "t-1", Some([7; 16]), Some(0), false),
            item(1, "tab\there", "line\nbreak \\ é", None, None, true),
            item(12, "q", "", Some([0xff; 16]), Some(-1), true),
        ];
        let serde_text =
            serde_json::to_string(&out.iter().map(|o| o.answer()).collect::<Vec<_>>()).unwrap();
        assert_eq!(answers_json(&out), serde_text);
        assert_eq!(answers_json(&[]), "[]");
    }
}
