//! The binary push body (`application/x-queen-push`), little-endian:
//!
//! ```text
//! "QPB1" | u8 flags | [u32 raw_len, when flags & 1] | body
//! body:  u32 groups | per group: u16 len, queue | u16 len, partition | u32 n
//!        | n x ([u16 len, transactionId, when flags & 4] | u32 len, payload)
//! ```
//!
//! flags: 1 = the body is one zstd frame of `raw_len` bytes, 2 = answer with
//! counts only, 4 = every item carries a transaction id (empty = mint one),
//! 8 = every group is `u32 n | u32 z_len | z`, z being one zstd frame of `n`
//! frames exactly as they are stored. The binary transaction body
//! (`QTB1 | u8 flags | u32 len, head JSON | groups as with flag 8`) shares the
//! group layout.

use crate::reader::{put_text16, Reader};
use crate::segment::decompress_segment;
use crate::FrameError;

pub const PUSH_MAGIC: &[u8; 4] = b"QPB1";
pub const TXN_MAGIC: &[u8; 4] = b"QTB1";
pub const FLAG_ZSTD: u8 = 1;
pub const FLAG_COUNTS: u8 = 2;
pub const FLAG_TXN: u8 = 4;
pub const FLAG_FRAMES: u8 = 8;

/// The largest decompressed push body accepted (flag 1). Not measured: the
/// front-end's request body limit is far below it.
pub const MAX_PUSH_RAW_BYTES: usize = 256 * 1024 * 1024;

/// One message of a plain (not pre-framed) group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushItem {
    /// `None` when the body carries no transaction ids or this one is empty.
    pub transaction_id: Option<String>,
    pub payload: Vec<u8>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GroupMessages {
    Items(Vec<PushItem>),
    /// `count` frames, compressed once by the client; kept as they are.
    Packed {
        count: u32,
        zstd: Vec<u8>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushGroup {
    pub queue: String,
    pub partition: String,
    pub messages: GroupMessages,
}

impl PushGroup {
    pub fn len(&self) -> usize {
        match &self.messages {
            GroupMessages::Items(items) => items.len(),
            GroupMessages::Packed { count, .. } => *count as usize,
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushBody {
    pub counts_only: bool,
    pub groups: Vec<PushGroup>,
    /// The bytes a compressed body (flag 1) decompressed to; 0 for one sent
    /// as it is.
    pub inflated: usize,
}

/// A binary transaction body: the JSON head and the pushed groups.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxnBody {
    pub counts_only: bool,
    pub head: Vec<u8>,
    pub groups: Vec<PushGroup>,
}

fn packed_groups(r: &mut Reader<'_>) -> Result<Vec<PushGroup>, FrameError> {
    let n_groups = r.u32("group count")?;
    // Each group takes at least 2 + 2 + 4 + 4 bytes.
    let mut groups = Vec::with_capacity((n_groups as usize).min(r.remaining() / 12));
    for _ in 0..n_groups {
        let queue = r.text16("queue name")?.to_owned();
        let partition = r.text16("partition name")?.to_owned();
        let count = r.u32("message count")?;
        let z_len = r.u32("compressed group length")? as usize;
        let zstd = r.take(z_len, "compressed group")?.to_vec();
        groups.push(PushGroup {
            queue,
            partition,
            messages: GroupMessages::Packed { count, zstd },
        });
    }
    Ok(groups)
}

fn item_groups(r: &mut Reader<'_>, with_txn: bool) -> Result<Vec<PushGroup>, FrameError> {
    let n_groups = r.u32("group count")?;
    let mut groups = Vec::with_capacity((n_groups as usize).min(r.remaining() / 8));
    for _ in 0..n_groups {
        let queue = r.text16("queue name")?.to_owned();
        let partition = r.text16("partition name")?.to_owned();
        let n = r.u32("message count")?;
        // Each item takes at least its u32 payload length.
        let mut items = Vec::with_capacity((n as usize).min(r.remaining() / 4));
        for _ in 0..n {
            let transaction_id = if with_txn {
                let t = r.text16("transaction id")?;
                (!t.is_empty()).then(|| t.to_owned())
            } else {
                None
            };
            let len = r.u32("payload length")? as usize;
            let payload = r.take(len, "payload")?.to_vec();
            items.push(PushItem {
                transaction_id,
                payload,
            });
        }
        groups.push(PushGroup {
            queue,
            partition,
            messages: GroupMessages::Items(items),
        });
    }
    Ok(groups)
}

fn finish<T>(r: &Reader<'_>, value: T) -> Result<T, FrameError> {
    if !r.is_empty() {
        return Err(FrameError::invalid(format!(
            "{} bytes after the last group",
            r.remaining()
        )));
    }
    Ok(value)
}

/// Parses a `QPB1` body.
pub fn decode_push_body(data: &[u8]) -> Result<PushBody, FrameError> {
    decode_push_body_within(data, MAX_PUSH_RAW_BYTES)
}

/// The head of a `QPB1` body: its flags, checked, and the rest.
fn push_head<'a>(r: &mut Reader<'a>) -> Result<u8, FrameError> {
    if r.take(4, "magic")? != PUSH_MAGIC {
        return Err(FrameError::invalid(
            "not a binary push body (magic is not QPB1)",
        ));
    }
    let flags = r.u8("flags")?;
    if flags & !(FLAG_ZSTD | FLAG_COUNTS | FLAG_TXN | FLAG_FRAMES) != 0 {
        return Err(FrameError::invalid(format!(
            "binary push body has unknown flags {flags:#04x}"
        )));
    }
    if flags & FLAG_FRAMES != 0 && flags & (FLAG_ZSTD | FLAG_TXN) != 0 {
        return Err(FrameError::invalid(
            "flag 8 (frames) can not be combined with flags 1 or 4",
        ));
    }
    Ok(flags)
}

/// The decompressed groups of a body with flag 1, at most `max_raw` bytes
/// (the header's stated length is checked before anything is allocated).
fn inflate(r: &mut Reader<'_>, max_raw: usize) -> Result<Vec<u8>, FrameError> {
    let raw_len = r.u32("raw length")? as usize;
    if raw_len > max_raw {
        return Err(FrameError::TooLarge {
            what: "decompressed push body",
            limit: max_raw,
        });
    }
    let raw = decompress_segment(r.rest(), raw_len)?;
    if raw.len() != raw_len {
        return Err(FrameError::invalid(format!(
            "push body decompressed to {} bytes, header says {raw_len}",
            raw.len()
        )));
    }
    Ok(raw)
}

/// Parses a `QPB1` body whose compressed form (flag 1) may decompress to at
/// most `max_raw` bytes. Pre-framed groups (flag 8) stay compressed.
pub fn decode_push_body_within(data: &[u8], max_raw: usize) -> Result<PushBody, FrameError> {
    let max_raw = max_raw.min(MAX_PUSH_RAW_BYTES);
    let mut r = Reader::new(data);
    let flags = push_head(&mut r)?;
    let counts_only = flags & FLAG_COUNTS != 0;
    let body = |groups, inflated| PushBody {
        counts_only,
        groups,
        inflated,
    };
    if flags & FLAG_FRAMES != 0 {
        let groups = packed_groups(&mut r)?;
        return finish(&r, body(groups, 0));
    }
    let with_txn = flags & FLAG_TXN != 0;
    if flags & FLAG_ZSTD != 0 {
        let raw = inflate(&mut r, max_raw)?;
        let mut inner = Reader::new(&raw);
        let groups = item_groups(&mut inner, with_txn)?;
        return finish(&inner, body(groups, raw.len()));
    }
    let groups = item_groups(&mut r, with_txn)?;
    finish(&r, body(groups, 0))
}

/// The queue of each group of a `QPB1` body, in order, and whether the body
/// asks for counts only: its headers walked, no payload copied (a body
/// with flag 1 is decompressed to be read). Errors as
/// [`decode_push_body`] does on a body it can not read.
pub fn push_body_queues(data: &[u8]) -> Result<(Vec<String>, bool), FrameError> {
    push_body_queues_within(data, MAX_PUSH_RAW_BYTES)
}

/// [`push_body_queues`] of a body whose compressed form may decompress to
/// at most `max_raw` bytes.
pub fn push_body_queues_within(
    data: &[u8],
    max_raw: usize,
) -> Result<(Vec<String>, bool), FrameError> {
    let max_raw = max_raw.min(MAX_PUSH_RAW_BYTES);
    let mut r = Reader::new(data);
    let flags = push_head(&mut r)?;
    let counts_only = flags & FLAG_COUNTS != 0;
    let with_txn = flags & FLAG_TXN != 0;
    let raw;
    let mut inner = if flags & FLAG_ZSTD != 0 {
        raw = inflate(&mut r, max_raw)?;
        Reader::new(&raw)
    } else {
        r
    };
    let n_groups = inner.u32("group count")?;
    let mut queues = Vec::with_capacity((n_groups as usize).min(inner.remaining() / 8));
    for _ in 0..n_groups {
        queues.push(inner.text16("queue name")?.to_owned());
        inner.text16("partition name")?;
        let n = inner.u32("message count")?;
        if flags & FLAG_FRAMES != 0 {
            let z_len = inner.u32("compressed group length")? as usize;
            inner.take(z_len, "compressed group")?;
            continue;
        }
        for _ in 0..n {
            if with_txn {
                inner.text16("transaction id")?;
            }
            let len = inner.u32("payload length")? as usize;
            inner.take(len, "payload")?;
        }
    }
    finish(&inner, (queues, counts_only))
}

/// Parses a `QTB1` body.
pub fn decode_txn_body(data: &[u8]) -> Result<TxnBody, FrameError> {
    let mut r = Reader::new(data);
    if r.take(4, "magic")? != TXN_MAGIC {
        return Err(FrameError::invalid(
            "not a binary transaction body (magic is not QTB1)",
        ));
    }
    let flags = r.u8("flags")?;
    if flags & !FLAG_COUNTS != 0 {
        return Err(FrameError::invalid(format!(
            "binary transaction body has unknown flags {flags:#04x}"
        )));
    }
    let head_len = r.u32("head length")? as usize;
    let head = r.take(head_len, "head")?.to_vec();
    let groups = packed_groups(&mut r)?;
    finish(
        &r,
        TxnBody {
            counts_only: flags & FLAG_COUNTS != 0,
            head,
            groups,
        },
    )
}

/// Encodes plain groups as a `QPB1` body (the layout the clients send).
pub fn encode_push_body(groups: &[PushGroup], counts_only: bool) -> Result<Vec<u8>, FrameError> {
    let mut with_txn = false;
    let mut frames = false;
    for g in groups {
        match &g.messages {
            GroupMessages::Items(items) => {
                with_txn |= items.iter().any(|i| i.transaction_id.is_some())
            }
            GroupMessages::Packed { .. } => frames = true,
        }
    }
    let mut out = PUSH_MAGIC.to_vec();
    let mut flags = if counts_only { FLAG_COUNTS } else { 0 };
    if frames {
        flags |= FLAG_FRAMES;
    } else if with_txn {
        flags |= FLAG_TXN;
    }
    out.push(flags);
    out.extend_from_slice(&(groups.len() as u32).to_le_bytes());
    for g in groups {
        put_text16(&mut out, &g.queue, "queue name")?;
        put_text16(&mut out, &g.partition, "partition name")?;
        match &g.messages {
            GroupMessages::Items(items) => {
                if frames {
                    return Err(FrameError::invalid(
                        "a body can not mix packed and plain groups",
                    ));
                }
                out.extend_from_slice(&(items.len() as u32).to_le_bytes());
                for item in items {
                    if with_txn {
                        put_text16(
                            &mut out,
                            item.transaction_id.as_deref().unwrap_or(""),
                            "transaction id",
                        )?;
                    }
                    out.extend_from_slice(&(item.payload.len() as u32).to_le_bytes());
                    out.extend_from_slice(&item.payload);
                }
            }
            GroupMessages::Packed { count, zstd } => {
                out.extend_from_slice(&count.to_le_bytes());
                out.extend_from_slice(&(zstd.len() as u32).to_le_bytes());
                out.extend_from_slice(zstd);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(txn: Option<&str>) -> PushGroup {
        PushGroup {
            queue: "q".into(),
            partition: "p".into(),
            messages: GroupMessages::Items(vec![
                PushItem {
                    transaction_id: txn.map(str::to_owned),
                    payload: b"{\"a\":1}".to_vec(),
                },
                PushItem {
                    transaction_id: None,
                    payload: b"2".to_vec(),
                },
            ]),
        }
    }

    #[test]
    fn plain_round_trip() {
        for txn in [None, Some("t1")] {
            let body = encode_push_body(&[group(txn)], true).unwrap();
            let back = decode_push_body(&body).unwrap();
            assert!(back.counts_only);
            assert_eq!(back.groups, vec![group(txn)]);
        }
    }

    #[test]
    fn compressed_body() {
        let plain = encode_push_body(&[group(Some("x"))], false).unwrap();
        let raw = &plain[5..];
        let mut body = PUSH_MAGIC.to_vec();
        body.push(FLAG_ZSTD | FLAG_TXN);
        body.extend_from_slice(&(raw.len() as u32).to_le_bytes());
        body.extend_from_slice(&zstd::bulk::compress(raw, 3).unwrap());
        assert_eq!(
            decode_push_body(&body).unwrap().groups,
            vec![group(Some("x"))]
        );
        // A raw_len that lies is refused.
        let mut lie = body.clone();
        lie[5..9].copy_from_slice(&((raw.len() + 1) as u32).to_le_bytes());
        assert!(decode_push_body(&lie).is_err());
    }

    /// `group(txn)` renamed to queue `q`.
    fn group_of(q: &str, txn: Option<&str>) -> PushGroup {
        PushGroup {
            queue: q.into(),
            ..group(txn)
        }
    }

    #[test]
    fn queues_are_read_without_decoding_every_layout() {
        let groups = [
            group_of("a", Some("t")),
            group_of("b", None),
            group_of("a", None),
        ];
        let names = |body: &[u8]| push_body_queues(body).unwrap();
        let want = (vec!["a".to_owned(), "b".into(), "a".into()], true);
        assert_eq!(names(&encode_push_body(&groups, true).unwrap()), want);
        // Compressed (flag 1).
        let plain = encode_push_body(&groups, false).unwrap();
        let raw = &plain[5..];
        let mut zipped = PUSH_MAGIC.to_vec();
        zipped.push(FLAG_ZSTD | FLAG_TXN);
        zipped.extend_from_slice(&(raw.len() as u32).to_le_bytes());
        zipped.extend_from_slice(&zstd::bulk::compress(raw, 3).unwrap());
        assert_eq!(names(&zipped).0, want.0);
        assert!(!names(&zipped).1);
        // Pre-framed groups (flag 8).
        let packed: Vec<PushGroup> = ["x", "y"]
            .iter()
            .map(|q| PushGroup {
                queue: (*q).into(),
                partition: "p".into(),
                messages: GroupMessages::Packed {
                    count: 3,
                    zstd: vec![7; 11],
                },
            })
            .collect();
        let body = encode_push_body(&packed, false).unwrap();
        assert_eq!(names(&body), (vec!["x".to_owned(), "y".into()], false));
        // What decoding refuses, the walk refuses: a truncated body, bytes
        // after the last group, unknown flags.
        for bad in [
            &plain[..plain.len() - 1],
            &[plain.as_slice(), &[0]].concat()[..],
            b"QPB1\x40",
            &body[..body.len() - 2],
        ] {
            assert!(decode_push_body(bad).is_err());
            assert!(push_body_queues(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn refusals() {
        assert!(decode_push_body(b"QPB2\0").is_err());
        assert!(decode_push_body(b"QPB1\x40")
            .unwrap_err()
            .to_string()
            .contains("unknown flags"));
        assert!(decode_push_body(b"QPB1\x09").is_err());
        let mut body = encode_push_body(&[group(None)], false).unwrap();
        body.push(0);
        assert!(decode_push_body(&body)
            .unwrap_err()
            .to_string()
            .contains("after the last group"));
        // A group count far larger than the input.
        assert!(decode_push_body(b"QPB1\x00\xff\xff\xff\xff").is_err());
        // A compressed body whose header states more than the caller's
        // bound is refused before it is decompressed.
        let mut lie = b"QPB1\x01".to_vec();
        lie.extend_from_slice(&(1u32 << 20).to_le_bytes());
        lie.extend_from_slice(&crate::compress_segment(&vec![0u8; 1 << 20]));
        let err = decode_push_body_within(&lie, 1 << 16).unwrap_err();
        assert!(
            matches!(err, FrameError::TooLarge { limit: 65536, .. }),
            "{err}"
        );
    }
}
