//! The byte layouts of the queen message log, with no PostgreSQL dependency.
//!
//! - [`frame`]: one stored message (`u32 body_len | u8 flags | id | ...`).
//! - [`segment`]: `count` consecutive frames kept as one zstd frame.
//! - [`push_body`]: the binary push body `QPB1` the queen-mq clients send.
//! - [`pop_body`]: the framed pop answer `QPF1` the queen-mq clients read.
//!
//! Every decoder here works on untrusted bytes: it never panics, never reads
//! past its input, and allocates only in proportion to the bytes it was given
//! (a hostile count or length can not make it reserve memory up front).

pub mod error;
pub mod frame;
pub mod pop_body;
pub mod push_body;
pub mod reader;
pub mod segment;

pub use error::FrameError;
pub use frame::{encode_frame, parse_frames, FrameRef, FLAG_ENCRYPTED, FLAG_PRODUCER, FLAG_TRACE};
pub use segment::{compress_segment, decompress_segment, MAX_SEGMENT_RAW_BYTES};

/// A new version-7 UUID (time-ordered), as every message id is.
pub fn new_message_id() -> [u8; 16] {
    *uuid::Uuid::now_v7().as_bytes()
}

/// The canonical hyphenated text of a 16-byte id.
pub fn id_text(id: &[u8; 16]) -> String {
    uuid::Uuid::from_bytes(*id).hyphenated().to_string()
}
