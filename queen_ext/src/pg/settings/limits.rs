//! The bounds of one call.

use pgrx::guc::{GucContext, GucFlags, GucRegistry, GucSetting};

/// `queen.push_max_items`: most items one push call takes (default 10 000,
/// 1 to 1 000 000).
static PUSH_MAX_ITEMS: GucSetting<i32> = GucSetting::<i32>::new(10_000);
/// `queen.pop_max_batch`: largest `batch` one pop may ask for (default
/// 10 000, 1 to 1 000 000).
static POP_MAX_BATCH: GucSetting<i32> = GucSetting::<i32>::new(10_000);
/// `queen.pop_max_partitions`: most partitions one pop may claim (default
/// 100, 1 to 10 000).
static POP_MAX_PARTITIONS: GucSetting<i32> = GucSetting::<i32>::new(100);
/// `queen.pop_candidates`: most candidate partitions one pop examines per
/// partition it may claim (default 16, 1 to 10 000).
static POP_CANDIDATES: GucSetting<i32> = GucSetting::<i32>::new(16);
/// `queen.pop_scan_window`: most partitions of a queue a pop's candidate
/// window reads before the pop looks at all of them (default 256, 16 to
/// 1 000 000; never below the candidates the pop looks for).
static POP_SCAN_WINDOW: GucSetting<i32> = GucSetting::<i32>::new(256);
/// `queen.pop_memo_ms`: how long a backend passes by the partitions of a
/// queue it found done for a consumer group, before it reads the queue
/// again (default 30 000, 0 to 3 600 000; 0: never).
static POP_MEMO_MS: GucSetting<i32> = GucSetting::<i32>::new(30_000);
/// `queen.pop_memo_partitions`: most partitions a backend keeps found done,
/// over its queues and groups (default 65 536, 0 to 10 000 000).
static POP_MEMO_PARTITIONS: GucSetting<i32> = GucSetting::<i32>::new(65_536);
/// `queen.pop_autopilot_batch`: the batch of an autopilot pop that names
/// none (default 100, 1 to 1 000 000; never above `queen.pop_max_batch`).
static POP_AUTOPILOT_BATCH: GucSetting<i32> = GucSetting::<i32>::new(100);
/// `queen.pop_autopilot_partitions`: most partitions an autopilot pop that
/// names no width claims (default 8, 1 to 10 000; never above
/// `queen.pop_max_partitions`).
static POP_AUTOPILOT_PARTITIONS: GucSetting<i32> = GucSetting::<i32>::new(8);
/// `queen.ack_max_items`: most acknowledgements one ack call takes (default
/// 10 000, 1 to 1 000 000).
static ACK_MAX_ITEMS: GucSetting<i32> = GucSetting::<i32>::new(10_000);
/// `queen.ack_lookback_segments`: sidecar rows an ack of an id outside any
/// lease looks back over (default 64, 0 to 100 000).
static ACK_LOOKBACK_SEGMENTS: GucSetting<i32> = GucSetting::<i32>::new(64);
/// `queen.stream_max_rows`: most state rows one streaming call reads or
/// writes (default 100 000, 1 to 10 000 000).
static STREAM_MAX_ROWS: GucSetting<i32> = GucSetting::<i32>::new(100_000);
/// `queen.stream_flush_quiet_ms`: how long after a streaming state row was
/// written a cycle without an ack (an idle flush) that touches it is put
/// off (default 1000, 0 to 60 000).
static STREAM_FLUSH_QUIET_MS: GucSetting<i32> = GucSetting::<i32>::new(1000);
/// `queen.decompress_max_bytes`: bytes one request may decompress to, over
/// all its compressed parts (default 16 MiB, at least 1 KiB).
static DECOMPRESS_MAX_BYTES: GucSetting<i32> = GucSetting::<i32>::new(16 * 1024 * 1024);
/// `queen.fused_max_requests`: most requests one fused call (`push_fused`,
/// `ack_fused`, `renew_fused`) takes (default 1 000, 1 to 100 000).
static FUSED_MAX_REQUESTS: GucSetting<i32> = GucSetting::<i32>::new(1_000);

/// `queen.segment_max_bytes`: bytes of frames (uncompressed) one segment a
/// push writes holds at most (default 64 MiB, 64 KiB to 128 MiB: half of
/// what a reader opens, `MAX_SEGMENT_RAW_BYTES`).
static SEGMENT_MAX_BYTES: GucSetting<i32> = GucSetting::<i32>::new(64 * 1024 * 1024);

/// `queen.push_known_partitions`: partition ids a backend remembers for its
/// next pushes (default 10 000, 0 to 1 000 000; 0: none).
static PUSH_KNOWN_PARTITIONS: GucSetting<i32> = GucSetting::<i32>::new(10_000);

pub(super) fn register_limits() {
    register_push_limits();
    register_pop_limits();
    register_ack_limits();
}

/// The bounds of a push.
fn register_push_limits() {
    GucRegistry::define_int_guc(
        c"queen.segment_max_bytes",
        c"Bytes of messages (uncompressed) one segment holds at most.",
        c"A push, fused or not, writes more to one partition as several segments.",
        &SEGMENT_MAX_BYTES,
        64 * 1024,
        (queen_frames::MAX_SEGMENT_RAW_BYTES / 2) as i32,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.push_known_partitions",
        c"Partition ids a backend remembers for its next pushes.",
        c"A push over partitions it knows locks them by id without resolving their names; 0 remembers none.",
        &PUSH_KNOWN_PARTITIONS,
        0,
        1_000_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.fused_max_requests",
        c"Most requests one fused call takes.",
        c"Each request keeps its own bounds (queen.push_max_items, queen.ack_max_items).",
        &FUSED_MAX_REQUESTS,
        1,
        100_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.push_max_items",
        c"Most messages one push call takes.",
        c"A larger push is refused with an error naming this setting.",
        &PUSH_MAX_ITEMS,
        1,
        1_000_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.decompress_max_bytes",
        c"Bytes one request may decompress to, over all its compressed parts \
          (binary push groups, timer payloads).",
        c"",
        &DECOMPRESS_MAX_BYTES,
        1024,
        i32::MAX,
        GucContext::Suset,
        GucFlags::default(),
    );
}

/// The bounds of a pop.
fn register_pop_limits() {
    register_pop_batch();
    register_pop_scan();
}

/// The batch and width of a pop.
fn register_pop_batch() {
    GucRegistry::define_int_guc(
        c"queen.pop_max_batch",
        c"Largest batch one pop may ask for.",
        c"",
        &POP_MAX_BATCH,
        1,
        1_000_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.pop_max_partitions",
        c"Most partitions one pop may claim.",
        c"",
        &POP_MAX_PARTITIONS,
        1,
        10_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.pop_autopilot_batch",
        c"The batch of an autopilot pop that names none.",
        c"Capped by queen.pop_max_batch.",
        &POP_AUTOPILOT_BATCH,
        1,
        1_000_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.pop_autopilot_partitions",
        c"Most partitions an autopilot pop that names no width claims.",
        c"It claims as many of them as have messages waiting, until its batch is full. \
          Capped by queen.pop_max_partitions.",
        &POP_AUTOPILOT_PARTITIONS,
        1,
        10_000,
        GucContext::Suset,
        GucFlags::default(),
    );
}

/// How far a pop looks for partitions.
fn register_pop_scan() {
    GucRegistry::define_int_guc(
        c"queen.pop_candidates",
        c"Candidate partitions a pop examines for each partition it may claim.",
        c"Candidates that are leased to others are skipped without waiting.",
        &POP_CANDIDATES,
        1,
        10_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.pop_scan_window",
        c"Partitions of a queue a pop reads, from where its last pop stopped, to find candidates.",
        c"Only a window that finds none has the pop read every partition of the queue.",
        &POP_SCAN_WINDOW,
        16,
        1_000_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.pop_memo_ms",
        c"How long a backend passes by the partitions of a queue it found done for a group.",
        c"A partition is passed by while no push raised its end and no cursor moved back; 0 turns it off.",
        &POP_MEMO_MS,
        0,
        3_600_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.pop_memo_partitions",
        c"Most partitions a backend keeps found done, over its queues and groups.",
        c"Past it, the partitions of a queue read next are not kept.",
        &POP_MEMO_PARTITIONS,
        0,
        10_000_000,
        GucContext::Suset,
        GucFlags::default(),
    );
}

/// The bounds of an ack and of a streaming cycle.
fn register_ack_limits() {
    GucRegistry::define_int_guc(
        c"queen.ack_max_items",
        c"Most acknowledgements one ack call takes.",
        c"",
        &ACK_MAX_ITEMS,
        1,
        1_000_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.stream_flush_quiet_ms",
        c"How long after a streaming state row was written an idle flush that touches it is put off.",
        c"A flush holds no lease: a row written since it read the state may hold another worker's batch.",
        &STREAM_FLUSH_QUIET_MS,
        0,
        60_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.stream_max_rows",
        c"Most state rows one streaming call reads or writes.",
        c"A read or a cycle past it is refused whole, never cut short.",
        &STREAM_MAX_ROWS,
        1,
        10_000_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.ack_lookback_segments",
        c"Sidecar rows searched for an acknowledged id outside any lease.",
        c"Such an ack is of a message already done; one older than this is answered as unknown.",
        &ACK_LOOKBACK_SEGMENTS,
        0,
        100_000,
        GucContext::Suset,
        GucFlags::default(),
    );
}

/// Most items one push call takes (`queen.push_max_items`).
pub fn push_max_items() -> usize {
    PUSH_MAX_ITEMS.get() as usize
}

/// Largest `batch` one pop may ask for (`queen.pop_max_batch`).
pub fn pop_max_batch() -> i64 {
    POP_MAX_BATCH.get() as i64
}

/// Most partitions one pop may claim (`queen.pop_max_partitions`).
pub fn pop_max_partitions() -> i64 {
    POP_MAX_PARTITIONS.get() as i64
}

/// Candidate partitions one pop examines per partition it may claim
/// (`queen.pop_candidates`).
pub fn pop_candidates() -> i64 {
    POP_CANDIDATES.get() as i64
}

/// Partitions of a queue a candidate window reads when it looks for
/// `candidates` (`queen.pop_scan_window`, never below `candidates`).
pub fn pop_scan_window(candidates: i64) -> i64 {
    (POP_SCAN_WINDOW.get() as i64).max(candidates)
}

/// How long a pop's memo of done partitions is used (ms; 0: not at all).
pub fn pop_memo_ms() -> i64 {
    POP_MEMO_MS.get() as i64
}

/// Most partitions a backend's memo keeps.
pub fn pop_memo_partitions() -> usize {
    POP_MEMO_PARTITIONS.get() as usize
}

/// The batch of an autopilot pop that names none, within
/// `queen.pop_max_batch` (`queen.pop_autopilot_batch`).
pub fn pop_autopilot_batch() -> i64 {
    (POP_AUTOPILOT_BATCH.get() as i64).min(pop_max_batch())
}

/// The widest an autopilot pop that names no width claims, within
/// `queen.pop_max_partitions` (`queen.pop_autopilot_partitions`).
pub fn pop_autopilot_partitions() -> i64 {
    (POP_AUTOPILOT_PARTITIONS.get() as i64).min(pop_max_partitions())
}

/// Partition ids a backend remembers for its next pushes
/// (`queen.push_known_partitions`).
pub fn push_known_partitions() -> usize {
    PUSH_KNOWN_PARTITIONS.get() as usize
}

/// Most requests one fused call takes (`queen.fused_max_requests`).
pub fn fused_max_requests() -> usize {
    FUSED_MAX_REQUESTS.get() as usize
}

/// Most acknowledgements one ack call takes (`queen.ack_max_items`).
pub fn ack_max_items() -> usize {
    ACK_MAX_ITEMS.get() as usize
}

/// Sidecar rows an ack outside any lease looks back over
/// (`queen.ack_lookback_segments`).
pub fn ack_lookback_segments() -> i64 {
    ACK_LOOKBACK_SEGMENTS.get() as i64
}

/// How long after a state row was written an idle flush that touches it is
/// put off, in milliseconds (`queen.stream_flush_quiet_ms`).
pub fn stream_flush_quiet_ms() -> i64 {
    STREAM_FLUSH_QUIET_MS.get() as i64
}

/// Most state rows one streaming call reads or writes
/// (`queen.stream_max_rows`).
pub fn stream_max_rows() -> i64 {
    STREAM_MAX_ROWS.get() as i64
}

/// Bytes of frames one segment a push writes holds at most
/// (`queen.segment_max_bytes`).
pub fn segment_max_bytes() -> usize {
    SEGMENT_MAX_BYTES.get() as usize
}

/// Bytes one request may decompress to (`queen.decompress_max_bytes`).
pub fn decompress_max_bytes() -> usize {
    DECOMPRESS_MAX_BYTES.get() as usize
}
