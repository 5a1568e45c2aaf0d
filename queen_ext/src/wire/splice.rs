//! Answers that carry stored payloads as they were pushed. A `Value` can
//! not hold every payload a push accepts (a lone surrogate escape such as
//! `"\ud800"` is valid JSON that `Value` refuses), so such an answer is
//! built with a placeholder string for each payload, serialized once, and
//! every placeholder is replaced by its payload's own text. The
//! placeholders carry a tag drawn for the answer (a fresh message id), which
//! no other text of the answer can hold.

use serde_json::value::RawValue;
use serde_json::Value;

/// The payloads of one answer, each behind its placeholder.
pub struct Splice {
    tag: String,
    raws: Vec<Box<RawValue>>,
}

impl Default for Splice {
    fn default() -> Splice {
        Splice::new()
    }
}

impl Splice {
    pub fn new() -> Splice {
        Splice {
            tag: format!(
                "\u{1}payload-{}-",
                queen_frames::id_text(&queen_frames::new_message_id())
            ),
            raws: Vec::new(),
        }
    }

    /// The placeholder of `raw` in the answer's `Value` (it may appear more
    /// than once).
    pub fn hold(&mut self, raw: Box<RawValue>) -> Value {
        let v = Value::String(format!("{}{}", self.tag, self.raws.len()));
        self.raws.push(raw);
        v
    }

    /// `value` as JSON text, every placeholder replaced by its payload.
    pub fn answer(self, value: &Value) -> Box<RawValue> {
        let text = serde_json::to_string(value).expect("answers serialize");
        if self.raws.is_empty() {
            return RawValue::from_string(text).expect("a serialized Value is JSON");
        }
        // The placeholder as serialized: its opening quote and the tag (the
        // tag's control character comes out escaped).
        let quoted = serde_json::to_string(&self.tag).expect("a string serializes");
        let needle = &quoted[..quoted.len() - 1];
        let extra: usize = self.raws.iter().map(|r| r.get().len()).sum();
        let mut out = String::with_capacity(text.len() + extra);
        let mut rest = text.as_str();
        while let Some(at) = rest.find(needle) {
            out.push_str(&rest[..at]);
            let after = &rest[at + needle.len()..];
            let end = after.find('"').expect("a placeholder ends with its quote");
            let i: usize = after[..end]
                .parse()
                .expect("a placeholder ends with its index");
            out.push_str(self.raws[i].get());
            rest = &after[end + 1..];
        }
        out.push_str(rest);
        RawValue::from_string(out).expect("payloads and a serialized Value make JSON")
    }
}

/// JSON null, as a payload that is not shown.
pub fn null() -> Box<RawValue> {
    RawValue::from_string("null".into()).expect("null is JSON")
}
