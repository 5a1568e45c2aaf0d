//! A stored segment: its offsets, its zstd frame, and its frames read back
//! one by one (a frame the engine can not decode is corrupt, XX001).

use queen_frames::frame::FrameIter;
use queen_frames::FrameRef;

use crate::pg::errors;

/// One stored segment row.
pub struct Segment {
    pub base_offset: i64,
    pub end_offset: i64,
    pub count: i32,
    pub created_at_us: i64,
    /// The stored zstd frame.
    pub blob: Vec<u8>,
    /// The decompressed frames, once read.
    pub raw: std::cell::OnceCell<Vec<u8>>,
}

impl Segment {
    /// The decompressed frames' bytes.
    pub fn raw(&self) -> &[u8] {
        self.raw.get_or_init(|| {
            queen_frames::decompress_segment(&self.blob, queen_frames::MAX_SEGMENT_RAW_BYTES)
                .unwrap_or_else(|e| {
                    errors::corrupt(format!("segment at offset {}: {e}", self.base_offset))
                })
        })
    }

    /// Its frames, in offset order.
    pub fn frames(&self) -> impl Iterator<Item = FrameRef<'_>> {
        let base = self.base_offset;
        FrameIter::new(self.raw(), self.count as u32).map(move |f| {
            f.unwrap_or_else(|e| errors::corrupt(format!("segment at offset {base}: {e}")))
        })
    }
}
