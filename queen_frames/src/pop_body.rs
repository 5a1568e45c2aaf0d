//! The framed pop answer (`application/x-queen-pop`), little-endian:
//!
//! ```text
//! "QPF1" | u8 1 | u32 len, the answer's own keys as one JSON object
//! u16 len, queue | u16 len, leaseId | u16 len, consumerGroup | u32 claims
//! per claim:  u64 partitionId | u16 len, partition | u64 start | u64 end
//!             | u32 deliveryAttempt | u32 records
//! per record: u64 base_offset | i64 created_at_us | u32 count
//!             | u8 codec (0 raw, 1 zstd) | u32 len | bytes
//! ```
//!
//! A record is a stored segment as it is; message `i` of it belongs to the
//! delivery when `base_offset + i` lies in its claim's `start..=end`.

use crate::reader::{put_text16, Reader};
use crate::FrameError;

pub const POP_MAGIC: &[u8; 4] = b"QPF1";
pub const CODEC_RAW: u8 = 0;
pub const CODEC_ZSTD: u8 = 1;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PopRecord {
    pub base_offset: u64,
    pub created_at_us: i64,
    pub count: u32,
    pub codec: u8,
    pub bytes: Vec<u8>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PopClaim {
    pub partition_id: u64,
    pub partition: String,
    pub start: u64,
    pub end: u64,
    pub delivery_attempt: u32,
    pub records: Vec<PopRecord>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PopAnswer {
    /// The answer's own keys as JSON text (empty for none).
    pub own_json: Vec<u8>,
    pub queue: String,
    pub lease_id: String,
    pub consumer_group: String,
    pub claims: Vec<PopClaim>,
}

pub fn encode_pop_answer(answer: &PopAnswer) -> Result<Vec<u8>, FrameError> {
    let size: usize = answer
        .claims
        .iter()
        .flat_map(|c| c.records.iter().map(|r| r.bytes.len() + 25))
        .sum();
    let mut out = Vec::with_capacity(64 + answer.own_json.len() + size);
    out.extend_from_slice(POP_MAGIC);
    out.push(1);
    let own_len = u32::try_from(answer.own_json.len())
        .map_err(|_| FrameError::invalid("own keys too long"))?;
    out.extend_from_slice(&own_len.to_le_bytes());
    out.extend_from_slice(&answer.own_json);
    put_text16(&mut out, &answer.queue, "queue name")?;
    put_text16(&mut out, &answer.lease_id, "lease id")?;
    put_text16(&mut out, &answer.consumer_group, "consumer group")?;
    out.extend_from_slice(&(answer.claims.len() as u32).to_le_bytes());
    for claim in &answer.claims {
        out.extend_from_slice(&claim.partition_id.to_le_bytes());
        put_text16(&mut out, &claim.partition, "partition name")?;
        out.extend_from_slice(&claim.start.to_le_bytes());
        out.extend_from_slice(&claim.end.to_le_bytes());
        out.extend_from_slice(&claim.delivery_attempt.to_le_bytes());
        out.extend_from_slice(&(claim.records.len() as u32).to_le_bytes());
        for rec in &claim.records {
            out.extend_from_slice(&rec.base_offset.to_le_bytes());
            out.extend_from_slice(&rec.created_at_us.to_le_bytes());
            out.extend_from_slice(&rec.count.to_le_bytes());
            out.push(rec.codec);
            let len = u32::try_from(rec.bytes.len())
                .map_err(|_| FrameError::invalid("record too long"))?;
            out.extend_from_slice(&len.to_le_bytes());
            out.extend_from_slice(&rec.bytes);
        }
    }
    Ok(out)
}

pub fn decode_pop_answer(data: &[u8]) -> Result<PopAnswer, FrameError> {
    let mut r = Reader::new(data);
    if r.take(4, "magic")? != POP_MAGIC {
        return Err(FrameError::invalid(
            "not a framed pop answer (magic is not QPF1)",
        ));
    }
    let own_json = match r.u8("version")? {
        0 => Vec::new(),
        1 => {
            let len = r.u32("own keys length")? as usize;
            r.take(len, "own keys")?.to_vec()
        }
        v => {
            return Err(FrameError::invalid(format!(
                "unknown framed pop version {v}"
            )))
        }
    };
    let queue = r.text16("queue name")?.to_owned();
    let lease_id = r.text16("lease id")?.to_owned();
    let consumer_group = r.text16("consumer group")?.to_owned();
    let n_claims = r.u32("claim count")?;
    let mut claims = Vec::with_capacity((n_claims as usize).min(r.remaining() / 34));
    for _ in 0..n_claims {
        claims.push(decode_claim(&mut r)?);
    }
    if !r.is_empty() {
        return Err(FrameError::invalid(format!(
            "{} bytes after the last claim",
            r.remaining()
        )));
    }
    Ok(PopAnswer {
        own_json,
        queue,
        lease_id,
        consumer_group,
        claims,
    })
}

/// One claim of a framed pop answer, its records included.
fn decode_claim(r: &mut Reader<'_>) -> Result<PopClaim, FrameError> {
    let partition_id = r.u64("partition id")?;
    let partition = r.text16("partition name")?.to_owned();
    let start = r.u64("claim start")?;
    let end = r.u64("claim end")?;
    let delivery_attempt = r.u32("delivery attempt")?;
    let n_records = r.u32("record count")?;
    let mut records = Vec::with_capacity((n_records as usize).min(r.remaining() / 25));
    for _ in 0..n_records {
        records.push(decode_record(r)?);
    }
    Ok(PopClaim {
        partition_id,
        partition,
        start,
        end,
        delivery_attempt,
        records,
    })
}

/// One record of a claim: its head, then its stored bytes.
fn decode_record(r: &mut Reader<'_>) -> Result<PopRecord, FrameError> {
    let base_offset = r.u64("record base offset")?;
    let created_at_us = r.i64("record created_at")?;
    let count = r.u32("record count")?;
    let codec = r.u8("record codec")?;
    if codec > CODEC_ZSTD {
        return Err(FrameError::invalid(format!("unknown record codec {codec}")));
    }
    let len = r.u32("record length")? as usize;
    let bytes = r.take(len, "record bytes")?.to_vec();
    Ok(PopRecord {
        base_offset,
        created_at_us,
        count,
        codec,
        bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let answer = PopAnswer {
            own_json: b"{\"frames\":true}".to_vec(),
            queue: "q".into(),
            lease_id: "l".into(),
            consumer_group: "__QUEUE_MODE__".into(),
            claims: vec![PopClaim {
                partition_id: 42,
                partition: "Default".into(),
                start: 3,
                end: 9,
                delivery_attempt: 1,
                records: vec![PopRecord {
                    base_offset: 0,
                    created_at_us: 1_700_000_000_000_000,
                    count: 10,
                    codec: CODEC_ZSTD,
                    bytes: vec![1, 2, 3],
                }],
            }],
        };
        let bytes = encode_pop_answer(&answer).unwrap();
        assert_eq!(decode_pop_answer(&bytes).unwrap(), answer);
        assert!(decode_pop_answer(&bytes[..bytes.len() - 1]).is_err());
    }
}
