//! Message payloads as they arrive: one JSON document in UTF-8, and the
//! decompression budget one request may spend (`queen.decompress_max_bytes`).

use queen_frames::FrameError;

use crate::pg::errors;

/// What one request may decompress to, over all its compressed parts
/// (`queen.decompress_max_bytes`): each part is decompressed with what is
/// left as its bound, so nothing past it is ever allocated.
pub struct Inflate {
    left: usize,
    /// Shared by the requests of one fused call (the error says so).
    call: bool,
}

impl Inflate {
    pub fn new() -> Inflate {
        Inflate {
            left: crate::pg::settings::decompress_max_bytes(),
            call: false,
        }
    }

    /// The budget of a whole fused call: its requests decompress to at most
    /// `queen.decompress_max_bytes` together, not each.
    pub fn for_call() -> Inflate {
        Inflate {
            call: true,
            ..Inflate::new()
        }
    }

    /// Counts `bytes` already decompressed (a compressed body) against the
    /// budget (22P03 past it).
    pub fn charge(&mut self, what: &str, bytes: usize) {
        match self.left.checked_sub(bytes) {
            Some(left) => self.left = left,
            None => self.exceeded(what),
        }
    }

    /// The refusal of a request past the budget (22P03).
    pub fn exceeded(&self, what: &str) -> ! {
        if self.call {
            errors::bad_binary(
                what,
                format!(
                    "the requests of this fused call decompress to more than \
                     queen.decompress_max_bytes ({} bytes) together",
                    crate::pg::settings::decompress_max_bytes()
                ),
            )
        }
        exceeded(what)
    }

    /// What is left of the budget, in bytes.
    pub fn left(&self) -> usize {
        self.left
    }

    /// Decompresses one zstd frame of the request; `what` names it in an
    /// error (22P03).
    pub fn take(&mut self, what: &str, zstd: &[u8]) -> Vec<u8> {
        match queen_frames::decompress_segment(zstd, self.left) {
            Ok(raw) => {
                self.left -= raw.len();
                raw
            }
            Err(FrameError::TooLarge { .. }) => self.exceeded(what),
            Err(e) => errors::bad_binary(what, e),
        }
    }
}

impl Default for Inflate {
    fn default() -> Inflate {
        Inflate::new()
    }
}

pub fn exceeded(what: &str) -> ! {
    errors::bad_binary(
        what,
        format!(
            "the request decompresses to more than queen.decompress_max_bytes ({} bytes)",
            crate::pg::settings::decompress_max_bytes()
        ),
    )
}

/// Why `payload` can not be stored as a message: it must be one JSON
/// document in UTF-8 (what every reader answers it as, byte for byte).
pub fn payload_problem(payload: &[u8]) -> Option<String> {
    if let Err(e) = std::str::from_utf8(payload) {
        return Some(format!("payload is not UTF-8: {e}"));
    }
    serde_json::from_slice::<serde::de::IgnoredAny>(payload)
        .err()
        .map(|e| format!("payload is not one JSON document: {e}"))
}

/// `what` names the payload, only in an error.
pub fn check_json(what: impl FnOnce() -> String, payload: &[u8]) {
    if let Some(problem) = payload_problem(payload) {
        errors::bad_binary(&what(), problem);
    }
}
