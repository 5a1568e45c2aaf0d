//! The byte layouts of the queen message log, with no PostgreSQL dependency.
//!
//! - [`frame`]: one stored message (`u32 body_len | u8 flags | id | ...`).
//! - [`segment`]: `count` consecutive frames kept as one zstd frame.
//! - [`push_body`]: the binary push body `QPB1` the queen-mq clients send.
//! - [`pop_body`]: the framed pop answer `QPF1` the queen-mq clients read.
//! - [`route`]: the shard of a queue or an id behind a sharding proxy.
//!
//! Every decoder here works on untrusted bytes: it never panics, never reads
//! past its input, and allocates only in proportion to the bytes it was given
//! (a hostile count or length can not make it reserve memory up front).

pub mod error;
pub mod frame;
pub mod pop_body;
pub mod push_body;
pub mod reader;
pub mod route;
pub mod segment;

pub use error::FrameError;
pub use frame::{encode_frame, parse_frames, FrameRef, FLAG_ENCRYPTED, FLAG_PRODUCER, FLAG_TRACE};
pub use segment::{compress_segment, decompress_segment, MAX_SEGMENT_RAW_BYTES};

/// A new version-7 UUID (time-ordered), as every message id is. The random
/// bits come from a per-thread generator seeded once from the OS, not from a
/// system call per id.
pub fn new_message_id() -> [u8; 16] {
    use std::cell::Cell;
    thread_local! {
        static STATE: Cell<u64> = Cell::new({
            let seed = *uuid::Uuid::new_v4().as_bytes();
            u64::from_le_bytes(seed[..8].try_into().unwrap()) | 1
        });
    }
    // xorshift64*: fast and plenty for the 74 random bits of an id.
    let next = || {
        STATE.with(|s| {
            let mut x = s.get();
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            s.set(x);
            x.wrapping_mul(0x2545_F491_4F6C_DD1D)
        })
    };
    let mut random = [0u8; 10];
    random[..8].copy_from_slice(&next().to_le_bytes());
    random[8..].copy_from_slice(&next().to_le_bytes()[..2]);
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0);
    *uuid::Builder::from_unix_timestamp_millis(millis, &random)
        .into_uuid()
        .as_bytes()
}

/// The canonical hyphenated text of a 16-byte id.
pub fn id_text(id: &[u8; 16]) -> String {
    uuid::Uuid::from_bytes(*id).hyphenated().to_string()
}

#[cfg(test)]
mod tests {
    #[test]
    fn message_ids_are_version_7_and_distinct() {
        let a = uuid::Uuid::from_bytes(super::new_message_id());
        let b = uuid::Uuid::from_bytes(super::new_message_id());
        assert_eq!(a.get_version_num(), 7);
        assert_ne!(a, b);
    }
}
