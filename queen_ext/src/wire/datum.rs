//! JSON at the SQL boundary (`queen_datum`), and the argument's value tree.

pub use queen_datum::{JsonOut, JsonbArg};

/// A `jsonb` argument as a value tree.
pub trait ArgValue {
    /// The argument as a value tree; `field` names it in an error (22023:
    /// nested deeper than the engine builds trees for).
    fn value(&self, field: &str) -> serde_json::Value;
}

impl ArgValue for JsonbArg {
    fn value(&self, field: &str) -> serde_json::Value {
        crate::wire::json::parse_value(field, &self.0)
    }
}
