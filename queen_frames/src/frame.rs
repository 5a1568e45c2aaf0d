//! One stored message, little-endian:
//!
//! ```text
//! u32 body_len | u8 flags | u8[16] message id (UUIDv7)
//! | [u8[16] trace id, when flags & 1] | u16 len, transactionId
//! | [u16 len, producer, when flags & 2] | payload (one JSON document)
//! ```
//!
//! `body_len` counts every byte after itself. Flag 4 marks an encrypted
//! payload; no other bit is defined and a frame carrying one is refused.

use crate::reader::{put_text16, Reader};
use crate::FrameError;

pub const FLAG_TRACE: u8 = 1;
pub const FLAG_PRODUCER: u8 = 2;
pub const FLAG_ENCRYPTED: u8 = 4;
const KNOWN_FLAGS: u8 = FLAG_TRACE | FLAG_PRODUCER | FLAG_ENCRYPTED;

/// The smallest body: flags, message id and an empty transaction id.
pub const MIN_FRAME_BODY: usize = 1 + 16 + 2;
/// The smallest frame including its length prefix.
pub const MIN_FRAME_LEN: usize = 4 + MIN_FRAME_BODY;

/// A frame borrowed from the bytes it was parsed from (or to be encoded).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameRef<'a> {
    /// Only [`FLAG_ENCRYPTED`] is taken from here on encode; the trace and
    /// producer bits follow the presence of those fields.
    pub flags: u8,
    pub message_id: [u8; 16],
    pub trace_id: Option<[u8; 16]>,
    pub transaction_id: &'a str,
    pub producer: Option<&'a str>,
    pub payload: &'a [u8],
}

impl FrameRef<'_> {
    /// The bytes this frame takes when encoded, prefix included.
    pub fn encoded_len(&self) -> usize {
        4 + MIN_FRAME_BODY
            + self.trace_id.map_or(0, |_| 16)
            + self.transaction_id.len()
            + self.producer.map_or(0, |p| 2 + p.len())
            + self.payload.len()
    }

    pub fn is_encrypted(&self) -> bool {
        self.flags & FLAG_ENCRYPTED != 0
    }
}

/// Appends one encoded frame to `out`.
pub fn encode_frame(out: &mut Vec<u8>, frame: &FrameRef<'_>) -> Result<(), FrameError> {
    let body_len = u32::try_from(frame.encoded_len() - 4)
        .map_err(|_| FrameError::invalid("frame longer than 4 GiB"))?;
    let mut flags = frame.flags & FLAG_ENCRYPTED;
    if frame.trace_id.is_some() {
        flags |= FLAG_TRACE;
    }
    if frame.producer.is_some() {
        flags |= FLAG_PRODUCER;
    }
    out.reserve(frame.encoded_len());
    out.extend_from_slice(&body_len.to_le_bytes());
    out.push(flags);
    out.extend_from_slice(&frame.message_id);
    if let Some(trace) = &frame.trace_id {
        out.extend_from_slice(trace);
    }
    put_text16(out, frame.transaction_id, "transaction id")?;
    if let Some(producer) = frame.producer {
        put_text16(out, producer, "producer")?;
    }
    out.extend_from_slice(frame.payload);
    Ok(())
}

/// Parses one frame body (the bytes after its `u32 body_len`).
fn parse_body(body: &[u8]) -> Result<FrameRef<'_>, FrameError> {
    let mut r = Reader::new(body);
    let flags = r.u8("frame flags")?;
    if flags & !KNOWN_FLAGS != 0 {
        return Err(FrameError::invalid(format!(
            "frame has unknown flags {flags:#04x}"
        )));
    }
    let message_id = r.id16("frame message id")?;
    let trace_id = if flags & FLAG_TRACE != 0 {
        Some(r.id16("frame trace id")?)
    } else {
        None
    };
    let transaction_id = r.text16("frame transaction id")?;
    let producer = if flags & FLAG_PRODUCER != 0 {
        Some(r.text16("frame producer")?)
    } else {
        None
    };
    let payload = r.rest();
    Ok(FrameRef {
        flags,
        message_id,
        trace_id,
        transaction_id,
        producer,
        payload,
    })
}

/// Walks the frames of a decompressed segment one at a time.
pub struct FrameIter<'a> {
    reader: Reader<'a>,
    left: u32,
    failed: bool,
}

impl<'a> FrameIter<'a> {
    /// Iterates exactly `count` frames over `raw`; bytes left after the last
    /// frame are an error reported at the end.
    pub fn new(raw: &'a [u8], count: u32) -> Self {
        FrameIter {
            reader: Reader::new(raw),
            left: count,
            failed: false,
        }
    }
}

impl<'a> Iterator for FrameIter<'a> {
    type Item = Result<FrameRef<'a>, FrameError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        if self.left == 0 {
            if !self.reader.is_empty() {
                self.failed = true;
                return Some(Err(FrameError::invalid(format!(
                    "{} bytes after the last frame",
                    self.reader.remaining()
                ))));
            }
            return None;
        }
        self.left -= 1;
        let item = (|| {
            let len = self.reader.u32("frame length")? as usize;
            if len < MIN_FRAME_BODY {
                return Err(FrameError::invalid(format!(
                    "frame body of {len} bytes is too short"
                )));
            }
            parse_body(self.reader.take(len, "frame body")?)
        })();
        if item.is_err() {
            self.failed = true;
        }
        Some(item)
    }
}

/// Parses exactly `count` frames that fill `raw` completely.
pub fn parse_frames(raw: &[u8], count: u32) -> Result<Vec<FrameRef<'_>>, FrameError> {
    // Never reserve more than the input could hold, whatever `count` says.
    let mut out = Vec::with_capacity((count as usize).min(raw.len() / MIN_FRAME_LEN));
    for frame in FrameIter::new(raw, count) {
        out.push(frame?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample<'a>(txn: &'a str, payload: &'a [u8]) -> FrameRef<'a> {
        FrameRef {
            flags: 0,
            message_id: [7; 16],
            trace_id: None,
            transaction_id: txn,
            producer: None,
            payload,
        }
    }

    #[test]
    fn layout_is_byte_exact() {
        let mut out = Vec::new();
        encode_frame(&mut out, &sample("ab", b"{}")).unwrap();
        let mut want = Vec::new();
        want.extend_from_slice(&(1u32 + 16 + 2 + 2 + 2).to_le_bytes());
        want.push(0);
        want.extend_from_slice(&[7; 16]);
        want.extend_from_slice(&2u16.to_le_bytes());
        want.extend_from_slice(b"ab");
        want.extend_from_slice(b"{}");
        assert_eq!(out, want);
    }

    #[test]
    fn optional_fields_set_their_flags() {
        let frame = FrameRef {
            trace_id: Some([9; 16]),
            producer: Some("svc"),
            flags: FLAG_ENCRYPTED,
            ..sample("t", b"1")
        };
        let mut out = Vec::new();
        encode_frame(&mut out, &frame).unwrap();
        assert_eq!(out[4], FLAG_TRACE | FLAG_PRODUCER | FLAG_ENCRYPTED);
        let back = parse_frames(&out, 1).unwrap();
        assert_eq!(back[0].trace_id, Some([9; 16]));
        assert_eq!(back[0].producer, Some("svc"));
        assert!(back[0].is_encrypted());
        assert_eq!(back[0].flags, FLAG_TRACE | FLAG_PRODUCER | FLAG_ENCRYPTED);
    }

    #[test]
    fn count_must_match() {
        let mut out = Vec::new();
        encode_frame(&mut out, &sample("a", b"1")).unwrap();
        encode_frame(&mut out, &sample("b", b"2")).unwrap();
        assert_eq!(parse_frames(&out, 2).unwrap().len(), 2);
        assert!(matches!(parse_frames(&out, 1), Err(FrameError::Invalid(_))));
        assert!(matches!(
            parse_frames(&out, 3),
            Err(FrameError::Truncated(_))
        ));
    }

    #[test]
    fn unknown_flags_and_short_bodies_are_refused() {
        let mut out = Vec::new();
        encode_frame(&mut out, &sample("a", b"1")).unwrap();
        let mut bad = out.clone();
        bad[4] = 0x80;
        assert!(parse_frames(&bad, 1)
            .unwrap_err()
            .to_string()
            .contains("unknown flags"));
        let mut short = out.clone();
        short[..4].copy_from_slice(&3u32.to_le_bytes());
        assert!(parse_frames(&short, 1).is_err());
        let huge_count = parse_frames(&out, u32::MAX);
        assert!(huge_count.is_err());
    }

    #[test]
    fn over_long_transaction_id_is_refused() {
        let long = "x".repeat(70_000);
        let mut out = Vec::new();
        let err = encode_frame(&mut out, &sample(&long, b"1")).unwrap_err();
        assert!(err.to_string().contains("transaction id"));
    }
}
