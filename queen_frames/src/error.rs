use std::fmt;

/// Why a byte string is not a valid frame, segment or wire body.
///
/// Every variant names what was wrong, so the message can go to a user as is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrameError {
    /// The input ended before a field it announced.
    Truncated(&'static str),
    /// A field holds a value the layout does not allow.
    Invalid(String),
    /// Decompressed data is larger than the allowed bound.
    TooLarge { what: &'static str, limit: usize },
    /// zstd refused the data.
    Zstd(String),
}

impl FrameError {
    pub fn invalid(msg: impl Into<String>) -> Self {
        FrameError::Invalid(msg.into())
    }
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::Truncated(what) => write!(f, "truncated: {what}"),
            FrameError::Invalid(msg) => write!(f, "{msg}"),
            FrameError::TooLarge { what, limit } => {
                write!(f, "{what} larger than {limit} bytes")
            }
            FrameError::Zstd(msg) => write!(f, "zstd: {msg}"),
        }
    }
}

impl std::error::Error for FrameError {}
