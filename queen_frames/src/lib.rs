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

/// A new version-7 UUID (time-ordered), as every message id is. Within a
/// thread (a backend) ids only rise, also inside one millisecond and when
/// the clock steps back: the 74 bits after the timestamp start random in
/// each millisecond, below half their range, and count up from there
/// (RFC 9562's monotonic random), so a batch's ids sort as it was written.
/// The random bits come from a per-thread generator seeded once from the
/// OS, not from a system call per id.
pub fn new_message_id() -> [u8; 16] {
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0);
    next_id(millis).to_be_bytes()
}

/// The 74 bits after a v7 id's timestamp.
const RANDOM_BITS: u32 = 74;

/// The next id of this thread at clock `millis`, as a number.
fn next_id(millis: u64) -> u128 {
    use std::cell::Cell;
    thread_local! {
        static STATE: Cell<u64> = Cell::new({
            let seed = *uuid::Uuid::new_v4().as_bytes();
            u64::from_le_bytes(seed[..8].try_into().unwrap()) | 1
        });
        /// The last id's (millisecond, random bits).
        static LAST: Cell<(u64, u128)> = const { Cell::new((0, 0)) };
    }
    // xorshift64*: fast and plenty for the 74 random bits of an id.
    let next = || {
        STATE.with(|s| {
            let mut x = s.get();
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            s.set(x);
            x.wrapping_mul(0x2545_F491_4F6C_DD1D) as u128
        })
    };
    let fresh = || ((next() << 64) | next()) & ((1u128 << (RANDOM_BITS - 1)) - 1);
    let (last_ms, last_random) = LAST.with(Cell::get);
    let (ms, random) = if millis > last_ms {
        (millis, fresh())
    } else {
        // The same millisecond, or the clock stepped back: count on from
        // the last id (a small random step), into the next millisecond
        // when the bits run out.
        let step = last_random + 1 + (next() & 0xFFFF);
        if step >> RANDOM_BITS == 0 {
            (last_ms, step)
        } else {
            (last_ms + 1, fresh())
        }
    };
    LAST.with(|l| l.set((ms, random)));
    let rand_a = random >> 62;
    let rand_b = random & ((1u128 << 62) - 1);
    ((ms as u128 & ((1 << 48) - 1)) << 80) | (0x7 << 76) | (rand_a << 64) | (0b10 << 62) | rand_b
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
        assert_eq!(a.get_variant(), uuid::Variant::RFC4122);
        assert_ne!(a, b);
    }

    #[test]
    fn message_ids_of_one_thread_rise_within_a_millisecond_and_across_a_clock_step_back() {
        let at = |ms| uuid::Uuid::from_u128(super::next_id(ms));
        let mut ids = Vec::new();
        for ms in [1_000, 1_000, 1_000, 999, 1_001, 1_001, 500] {
            ids.push(at(ms));
        }
        for pair in ids.windows(2) {
            assert!(pair[0] < pair[1], "{} then {}", pair[0], pair[1]);
            // Text order is byte order: what a client sorting ids sees.
            assert!(pair[0].to_string() < pair[1].to_string());
        }
        for id in &ids {
            assert_eq!(id.get_version_num(), 7);
            assert_eq!(id.get_variant(), uuid::Variant::RFC4122);
        }
        // The timestamp is the clock's, or the last id's when it stepped back.
        let millis = |id: &uuid::Uuid| (id.as_u128() >> 80) as u64;
        assert_eq!(millis(&ids[0]), 1_000);
        assert_eq!(millis(&ids[3]), 1_000);
        assert_eq!(millis(&ids[4]), 1_001);
        assert_eq!(millis(&ids[6]), 1_001);
    }
}
