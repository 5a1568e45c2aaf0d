//! A segment: `count` consecutive frames stored as one zstd frame. Message
//! `i` of a segment has offset `base_offset + i`; the offsets live in the
//! segment's row, not in its bytes.

use std::io::Read;

use crate::frame::{encode_frame, FrameRef};
use crate::FrameError;

/// The largest decompressed segment a decoder accepts. A push is split long
/// before this (a whole push body is bounded by the caller's own limits), so
/// anything larger is garbage or hostile. Not measured: chosen as a round
/// bound well above any batch a client sends.
pub const MAX_SEGMENT_RAW_BYTES: usize = 256 * 1024 * 1024;

/// The zstd window a decoder accepts (2^24 = 16 MiB). A compressor at its
/// default levels uses at most 2^22 on inputs of any size; a larger window is
/// refused instead of allocated.
const MAX_WINDOW_LOG: u32 = 24;

/// zstd level for segments the engine packs itself. Measured on 100 frames
/// of ~256 B JSON (2026-11-30): level 3 took 99 us for a ratio of 0.273,
/// level 1 77 us for 0.268, level -1 56 us for 0.368. Level 1 costs little
/// more than the negative levels and keeps segments a third smaller.
pub const SEGMENT_ZSTD_LEVEL: i32 = 1;

/// log2 of the compressor's match table, smaller than level 1 picks for
/// large inputs: a segment of 1000 such frames (300 KB) compressed in
/// 290-330 us instead of 360-470 us, and no larger; one of 100 frames took
/// the same time either way.
const SEGMENT_ZSTD_HASH_LOG: u32 = 13;

/// zstd level for small segments, those under [`FAST_SEGMENT_BELOW`] raw
/// bytes. Measured on 2026-12-05 on frames of the engine bench's messages
/// (about 200 B each), level 1 against level -1: 2 frames 3.8 us for a
/// ratio of 0.60 against 1.1 us for 0.65; 6 frames 4.5 us for 0.35 against
/// 1.5 us for 0.38; 10 frames 5.3 us for 0.28 against 2.1 us for 0.32. At
/// this size most of level 1's time is building its entropy tables, which
/// the negative levels skip; a fused push of single messages writes one
/// such segment per partition it touches.
pub const FAST_SEGMENT_ZSTD_LEVEL: i32 = -1;

/// Raw frame bytes under this compress at [`FAST_SEGMENT_ZSTD_LEVEL`];
/// from it on, at [`SEGMENT_ZSTD_LEVEL`].
pub const FAST_SEGMENT_BELOW: usize = 2048;

thread_local! {
    /// One compression context per level and one decompression context per
    /// thread, reused: creating a context per segment showed as 2% of a
    /// push's profile (2026-11-30, pgbench, batches of 100).
    static COMPRESSOR: std::cell::RefCell<Option<zstd::bulk::Compressor<'static>>> = const { std::cell::RefCell::new(None) };
    static FAST_COMPRESSOR: std::cell::RefCell<Option<zstd::bulk::Compressor<'static>>> = const { std::cell::RefCell::new(None) };
    static DECOMPRESSOR: std::cell::RefCell<Option<zstd::bulk::Decompressor<'static>>> = const { std::cell::RefCell::new(None) };
}

/// Raw frame bytes shorter than this are stored in a zstd frame of one raw
/// (uncompressed) block, which any zstd decoder reads. Measured on
/// 2026-12-03 at level 1: one frame of 198 B (a ~130 B JSON payload)
/// compressed to 0.93 of its size in 5.1 us, one of 425 B to 0.45 in 5.9
/// us. On 2026-12-05, frames of the engine bench's messages (199 B on
/// average): one compressed to 0.96 at level 1 (3.6 us) and not at all at
/// level -1, two (398 B) to 0.60 and 0.65. So a lone small message is kept
/// as it is, and two are compressed.
pub const RAW_SEGMENT_BELOW: usize = 384;

/// zstd's frame magic number, little-endian.
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];

/// `raw` (shorter than [`RAW_SEGMENT_BELOW`]) as one zstd frame: the magic,
/// a frame header descriptor saying "single segment, no checksum, no
/// dictionary" and the content size's width (one byte under 256 bytes, else
/// two bytes holding the size less 256), the content size, one last raw
/// block.
fn stored_frame(raw: &[u8]) -> Vec<u8> {
    debug_assert!(raw.len() < RAW_SEGMENT_BELOW);
    let block_header = 1u32 | ((raw.len() as u32) << 3);
    let mut out = Vec::with_capacity(raw.len() + 10);
    out.extend_from_slice(&ZSTD_MAGIC);
    match u8::try_from(raw.len()) {
        Ok(len) => {
            out.push(0x20);
            out.push(len);
        }
        Err(_) => {
            out.push(0x60);
            out.extend_from_slice(&((raw.len() - 256) as u16).to_le_bytes());
        }
    }
    out.extend_from_slice(&block_header.to_le_bytes()[..3]);
    out.extend_from_slice(raw);
    out
}

/// Compresses raw frame bytes into a segment blob: a small one is stored
/// uncompressed ([`RAW_SEGMENT_BELOW`]), one under [`FAST_SEGMENT_BELOW`]
/// compressed at [`FAST_SEGMENT_ZSTD_LEVEL`], a larger one at
/// [`SEGMENT_ZSTD_LEVEL`].
pub fn compress_segment(raw: &[u8]) -> Vec<u8> {
    if raw.len() < RAW_SEGMENT_BELOW {
        return stored_frame(raw);
    }
    let (cell, level) = if raw.len() < FAST_SEGMENT_BELOW {
        (&FAST_COMPRESSOR, FAST_SEGMENT_ZSTD_LEVEL)
    } else {
        (&COMPRESSOR, SEGMENT_ZSTD_LEVEL)
    };
    // zstd can only fail here on allocation failure or an invalid level.
    cell.with(|c| {
        let mut c = c.borrow_mut();
        let compressor = c.get_or_insert_with(|| {
            let mut z =
                zstd::bulk::Compressor::new(level).expect("a zstd context at a valid level");
            z.set_parameter(zstd::zstd_safe::CParameter::HashLog(SEGMENT_ZSTD_HASH_LOG))
                .expect("a hash log in zstd's range");
            z
        });
        compressor
            .compress(raw)
            .expect("zstd compression with a valid level")
    })
}

/// Encodes frames and compresses them as one segment blob.
pub fn encode_segment<'a, I>(frames: I) -> Result<Vec<u8>, FrameError>
where
    I: IntoIterator<Item = &'a FrameRef<'a>>,
{
    let mut raw = Vec::new();
    for frame in frames {
        encode_frame(&mut raw, frame)?;
    }
    Ok(compress_segment(&raw))
}

/// Decompresses a segment blob (or any zstd frame from a client), never
/// producing more than `limit` bytes, and allocating up front at most what
/// the frame's compressed length can plausibly hold.
pub fn decompress_segment(blob: &[u8], limit: usize) -> Result<Vec<u8>, FrameError> {
    if blob.is_empty() {
        return Err(FrameError::Truncated("empty zstd frame"));
    }
    // A frame that states its size (every one this crate writes), within the
    // limit and within what its compressed length can plausibly hold, is
    // decompressed in one call with a reused context into exactly that much
    // memory; anything else goes through the bounded stream, which allocates
    // only as output appears.
    if let Ok(Some(size)) = zstd::zstd_safe::get_frame_content_size(blob) {
        let plausible = (blob.len() as u64).saturating_mul(128);
        if size <= limit as u64 && size <= plausible {
            let fast = DECOMPRESSOR.with(|d| {
                let mut d = d.borrow_mut();
                let decompressor = match d.as_mut() {
                    Some(x) => x,
                    None => {
                        let mut x = zstd::bulk::Decompressor::new().ok()?;
                        x.window_log_max(MAX_WINDOW_LOG).ok()?;
                        d.insert(x)
                    }
                };
                decompressor.decompress(blob, size as usize).ok()
            });
            if let Some(out) = fast.filter(|o| o.len() as u64 == size) {
                return Ok(out);
            }
        }
    }
    let mut decoder = zstd::stream::read::Decoder::with_buffer(blob)
        .map_err(|e| FrameError::Zstd(e.to_string()))?;
    decoder
        .window_log_max(MAX_WINDOW_LOG)
        .map_err(|e| FrameError::Zstd(e.to_string()))?;
    let mut out = Vec::new();
    let mut bounded = decoder.take(limit as u64 + 1);
    bounded
        .read_to_end(&mut out)
        .map_err(|e| FrameError::Zstd(e.to_string()))?;
    if out.len() > limit {
        return Err(FrameError::TooLarge {
            what: "decompressed segment",
            limit,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_frames;

    #[test]
    fn round_trip() {
        let frames: Vec<FrameRef> = (0..10)
            .map(|i| FrameRef {
                flags: 0,
                message_id: [i as u8; 16],
                trace_id: None,
                transaction_id: "txn",
                producer: None,
                payload: b"{\"a\":1}",
            })
            .collect();
        let blob = encode_segment(frames.iter()).unwrap();
        let raw = decompress_segment(&blob, MAX_SEGMENT_RAW_BYTES).unwrap();
        assert_eq!(parse_frames(&raw, 10).unwrap(), frames);
    }

    #[test]
    fn limit_is_enforced_without_allocating_the_claim() {
        let raw = vec![b'x'; 1 << 20];
        let blob = compress_segment(&raw);
        assert!(blob.len() < 1024);
        let err = decompress_segment(&blob, 1000).unwrap_err();
        assert!(matches!(err, FrameError::TooLarge { .. }));
        assert_eq!(decompress_segment(&blob, 1 << 20).unwrap().len(), 1 << 20);
    }

    #[test]
    fn garbage_is_an_error() {
        assert!(decompress_segment(b"", 100).is_err());
        assert!(decompress_segment(b"not zstd at all", 100).is_err());
        let blob = compress_segment(b"hello world hello world");
        assert!(decompress_segment(&blob[..blob.len() - 3], 100).is_err());
    }

    #[test]
    fn a_small_segment_is_a_stored_zstd_frame_any_decoder_reads() {
        for len in [
            0usize,
            1,
            7,
            100,
            255,
            256,
            300,
            RAW_SEGMENT_BELOW - 1,
            RAW_SEGMENT_BELOW,
            1000,
            FAST_SEGMENT_BELOW,
        ] {
            let raw: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
            let blob = compress_segment(&raw);
            let stored = len < RAW_SEGMENT_BELOW;
            let header = if len < 256 { 9 } else { 10 };
            assert_eq!(
                blob.len() == len + header,
                stored,
                "{len} bytes: blob of {}",
                blob.len()
            );
            assert_eq!(
                decompress_segment(&blob, MAX_SEGMENT_RAW_BYTES).unwrap(),
                raw,
                "{len}"
            );
            // zstd's own streaming decoder, which ignores the stated size.
            assert_eq!(zstd::stream::decode_all(&blob[..]).unwrap(), raw, "{len}");
            assert_eq!(
                zstd::zstd_safe::get_frame_content_size(&blob).unwrap(),
                Some(len as u64)
            );
        }
        let blob = compress_segment(&[b'x'; 200]);
        assert!(matches!(
            decompress_segment(&blob, 100).unwrap_err(),
            FrameError::TooLarge { .. }
        ));
        for cut in 1..blob.len() {
            assert!(
                decompress_segment(&blob[..cut], 1000).is_err(),
                "cut at {cut}"
            );
        }
    }
}
