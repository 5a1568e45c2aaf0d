//! What a JSON body is, told from its first byte before it is parsed.

/// The byte a JSON array opens with.
const ARRAY_OPEN: u8 = b'[';
/// The byte a JSON object opens with.
const OBJECT_OPEN: u8 = b'{';

/// What a JSON text opens as: an array, an object, or anything else.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Array,
    Object,
    Other,
}

impl Shape {
    /// The shape of `text` from its very first byte; None when it is empty.
    pub fn of(text: &str) -> Option<Shape> {
        text.as_bytes().first().map(|&b| match b {
            ARRAY_OPEN => Shape::Array,
            OBJECT_OPEN => Shape::Object,
            _ => Shape::Other,
        })
    }
}
