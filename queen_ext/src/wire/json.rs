//! Typed access to the JSON bodies the public API takes, with errors that name
//! the field (`items[3].queue: must be a string`).

use serde_json::{Map, Value};

use crate::pg::errors;

/// The longest name or id (queue, partition, consumer group, namespace,
/// task, timer key, transaction id), in bytes. They are keys of btree
/// indexes, whose entries must fit a third of a page (2704 bytes): a longer
/// one would be refused deep inside a write (54000) or, for a transaction id
/// that is dead-lettered later, fail that ack over and over. A frame could
/// carry 65535.
pub const MAX_NAME_BYTES: usize = 1024;

/// The longest duration any request may ask for (a TTL, a lease, a timer's
/// delay), in seconds. Not measured: a century is past any expiry a queue
/// means, and keeps the interval arithmetic far from its range's end.
pub const MAX_DURATION_SECONDS: i64 = 100 * 366 * 86_400;

/// The deepest nesting a JSON argument may have. Not measured: deeper than
/// any document a client means, and shallow enough that building and
/// dropping its tree stays within a few hundred kB of stack. Payloads pushed
/// through `push` and `push_text` are kept as bytes and never built into a
/// tree, so they are not bound by it.
pub const MAX_ARGUMENT_DEPTH: usize = 512;

/// How deeply `text` (JSON) nests its arrays and objects, counted without
/// parsing it: one pass over the bytes, strings skipped.
pub fn nesting_depth(text: &[u8]) -> usize {
    let (mut depth, mut deepest, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for &b in text {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// A JSON argument as a value tree; `field` names it in the error when it
/// is not JSON or nests deeper than [`MAX_ARGUMENT_DEPTH`] (22023).
pub fn parse_value(field: &str, text: &str) -> Value {
    let depth = nesting_depth(text.as_bytes());
    if depth > MAX_ARGUMENT_DEPTH {
        errors::invalid(
            field,
            format!("JSON nested {depth} levels deep; at most {MAX_ARGUMENT_DEPTH} are allowed"),
        );
    }
    let mut de = serde_json::Deserializer::from_str(text);
    // The depth is bounded above; serde's own limit (128) would refuse
    // documents that jsonb and the payload path accept.
    de.disable_recursion_limit();
    let value = serde::Deserialize::deserialize(&mut de).and_then(|v: Value| de.end().map(|()| v));
    value.unwrap_or_else(|e| errors::invalid(field, format!("malformed JSON: {e}")))
}

/// An object from a request body, with the path used in error messages.
pub struct Obj<'a> {
    pub map: &'a Map<String, Value>,
    pub path: String,
}

impl<'a> Obj<'a> {
    pub fn new(value: &'a Value, path: impl Into<String>) -> Obj<'a> {
        let path = path.into();
        match value {
            Value::Object(map) => Obj { map, path },
            _ => errors::wrong_type(&path, "a JSON object"),
        }
    }

    pub fn field(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_owned()
        } else {
            format!("{}.{key}", self.path)
        }
    }

    /// The value, with JSON null read as absent.
    pub fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key).filter(|v| !v.is_null())
    }

    pub fn opt_str(&self, key: &str) -> Option<&'a str> {
        self.get(key).map(|v| match v {
            Value::String(s) => s.as_str(),
            _ => errors::wrong_type(&self.field(key), "a string"),
        })
    }

    pub fn req_str(&self, key: &str) -> &'a str {
        self.opt_str(key)
            .unwrap_or_else(|| errors::invalid(&self.field(key), "is required"))
    }

    /// A name: a non-empty string of at most [`MAX_NAME_BYTES`].
    pub fn opt_name(&self, key: &str) -> Option<&'a str> {
        self.opt_str(key).map(|s| check_name(&self.field(key), s))
    }

    pub fn req_name(&self, key: &str) -> &'a str {
        check_name(&self.field(key), self.req_str(key))
    }

    pub fn opt_bool(&self, key: &str) -> Option<bool> {
        self.get(key).map(|v| match v {
            Value::Bool(b) => *b,
            _ => errors::wrong_type(&self.field(key), "true or false"),
        })
    }

    pub fn opt_i64(&self, key: &str) -> Option<i64> {
        self.get(key).map(|v| as_i64(&self.field(key), v))
    }

    pub fn opt_array(&self, key: &str) -> Option<&'a Vec<Value>> {
        self.get(key).map(|v| match v {
            Value::Array(a) => a,
            _ => errors::wrong_type(&self.field(key), "an array"),
        })
    }
}

/// An integer, from a JSON number or a string of digits (ids travel as both).
pub fn as_i64(field: &str, v: &Value) -> i64 {
    match v {
        Value::Number(n) => n
            .as_i64()
            .unwrap_or_else(|| errors::invalid(field, format!("{n} is not a 64-bit integer"))),
        Value::String(s) => s
            .parse::<i64>()
            .unwrap_or_else(|_| errors::invalid(field, format!("{s:?} is not an integer"))),
        _ => errors::wrong_type(field, "an integer"),
    }
}

pub fn check_name<'s>(field: &str, s: &'s str) -> &'s str {
    if s.is_empty() {
        errors::invalid(field, "must not be empty");
    }
    if s.len() > MAX_NAME_BYTES {
        errors::too_long(field, s.len(), MAX_NAME_BYTES);
    }
    s
}

/// A UUID in its text form.
pub fn parse_uuid(field: &str, s: &str) -> uuid::Uuid {
    uuid::Uuid::parse_str(s).unwrap_or_else(|_| errors::bad_uuid(field, s))
}

/// A 16-byte id, answered as its hyphenated text without an allocation.
pub struct IdOut([u8; 36]);

impl IdOut {
    pub fn of(id: &[u8; 16]) -> IdOut {
        let mut text = [0u8; 36];
        uuid::Uuid::from_bytes(*id)
            .hyphenated()
            .encode_lower(&mut text);
        IdOut(text)
    }

    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.0).expect("hex digits and hyphens")
    }
}

impl serde::Serialize for IdOut {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// A 64-bit id answered as a JSON string (ids beyond 2^53 survive
/// JavaScript), written without an allocation.
pub struct IdNum(pub i64);

impl serde::Serialize for IdNum {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&self.0)
    }
}

/// Appends `s` as a JSON string. Text with nothing to escape (names and ids
/// almost always) is copied as it is; anything else goes through serde_json.
pub fn write_str(out: &mut String, s: &str) {
    if s.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        out.push('"');
        out.push_str(s);
        out.push('"');
    } else {
        out.push_str(&serde_json::to_string(s).expect("strings serialize"));
    }
}

/// Appends `s` as a JSON string, or null.
pub fn write_opt_str(out: &mut String, s: Option<&str>) {
    match s {
        Some(s) => write_str(out, s),
        None => out.push_str("null"),
    }
}

/// Appends a 16-byte id as its quoted hyphenated text, or null.
pub fn write_opt_id(out: &mut String, id: Option<&[u8; 16]>) {
    match id {
        Some(id) => {
            out.push('"');
            out.push_str(IdOut::of(id).as_str());
            out.push('"');
        }
        None => out.push_str("null"),
    }
}

/// A JSON array of `items`, each written by `write`, in a buffer of
/// `capacity` bytes to start with.
pub fn array_text<T>(
    items: &[T],
    capacity: usize,
    mut write: impl FnMut(&mut String, &T),
) -> String {
    let mut text = String::with_capacity(capacity + 2);
    text.push('[');
    for (k, item) in items.iter().enumerate() {
        if k > 0 {
            text.push(',');
        }
        write(&mut text, item);
    }
    text.push(']');
    text
}

/// Appends an integer in decimal.
pub fn write_int(out: &mut String, n: i64) {
    out.push_str(itoa::Buffer::new().format(n));
}

#[cfg(test)]
mod tests {
    #[test]
    fn written_strings_are_what_serde_writes() {
        for s in [
            "",
            "plain",
            "quote\"inside",
            "back\\slash",
            "tab\there",
            "nul\u{0}",
            "é ☃ \u{7f}",
            "\u{1f}",
        ] {
            let mut out = String::new();
            super::write_str(&mut out, s);
            assert_eq!(out, serde_json::to_string(s).unwrap(), "{s:?}");
        }
        let mut out = String::new();
        super::write_int(&mut out, i64::MIN);
        assert_eq!(out, i64::MIN.to_string());
    }

    #[test]
    fn nesting_depth_skips_strings() {
        assert_eq!(super::nesting_depth(b"1"), 0);
        assert_eq!(super::nesting_depth(br#"{"a": [1, {"b": []}]}"#), 4);
        assert_eq!(super::nesting_depth(br#"["[[[{{", "\"[[", [1]]"#), 2);
        let deep = format!("{}{}", "[".repeat(1000), "]".repeat(1000));
        assert_eq!(super::nesting_depth(deep.as_bytes()), 1000);
    }
}
