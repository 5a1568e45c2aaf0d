//! Property tests: the decoders never panic on arbitrary bytes, and what the
//! encoders write decodes back to the same values.

use proptest::prelude::*;
use queen_frames::frame::{encode_frame, parse_frames, FrameRef};
use queen_frames::pop_body::{
    decode_pop_answer, encode_pop_answer, PopAnswer, PopClaim, PopRecord,
};
use queen_frames::push_body::{
    decode_push_body, decode_txn_body, encode_push_body, GroupMessages, PushGroup, PushItem,
};
use queen_frames::segment::{compress_segment, decompress_segment};

#[derive(Debug, Clone)]
struct OwnedFrame {
    encrypted: bool,
    id: [u8; 16],
    trace: Option<[u8; 16]>,
    txn: String,
    producer: Option<String>,
    payload: Vec<u8>,
}

impl OwnedFrame {
    fn as_ref(&self) -> FrameRef<'_> {
        FrameRef {
            flags: if self.encrypted {
                queen_frames::FLAG_ENCRYPTED
            } else {
                0
            },
            message_id: self.id,
            trace_id: self.trace,
            transaction_id: &self.txn,
            producer: self.producer.as_deref(),
            payload: &self.payload,
        }
    }
}

fn frame_strategy() -> impl Strategy<Value = OwnedFrame> {
    (
        any::<bool>(),
        any::<[u8; 16]>(),
        proptest::option::of(any::<[u8; 16]>()),
        "\\PC{0,40}",
        proptest::option::of("[a-z0-9-]{0,20}"),
        proptest::collection::vec(any::<u8>(), 0..200),
    )
        .prop_map(
            |(encrypted, id, trace, txn, producer, payload)| OwnedFrame {
                encrypted,
                id,
                trace,
                txn,
                producer,
                payload,
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn frames_round_trip(frames in proptest::collection::vec(frame_strategy(), 0..20)) {
        let mut raw = Vec::new();
        for f in &frames {
            encode_frame(&mut raw, &f.as_ref()).unwrap();
        }
        let blob = compress_segment(&raw);
        let back_raw = decompress_segment(&blob, queen_frames::MAX_SEGMENT_RAW_BYTES).unwrap();
        prop_assert_eq!(&back_raw, &raw);
        let parsed = parse_frames(&back_raw, frames.len() as u32).unwrap();
        prop_assert_eq!(parsed.len(), frames.len());
        for (p, f) in parsed.iter().zip(&frames) {
            prop_assert_eq!(*p, f.as_ref().clone_with_flags());
        }
    }

    #[test]
    fn parse_frames_never_panics(data in proptest::collection::vec(any::<u8>(), 0..512), count in any::<u32>()) {
        let _ = parse_frames(&data, count);
    }

    #[test]
    fn mutated_frames_never_panic(frames in proptest::collection::vec(frame_strategy(), 1..5), at in any::<usize>(), byte in any::<u8>(), cut in any::<usize>()) {
        let mut raw = Vec::new();
        for f in &frames {
            encode_frame(&mut raw, &f.as_ref()).unwrap();
        }
        let i = at % raw.len();
        raw[i] = byte;
        raw.truncate(cut % (raw.len() + 1));
        if let Ok(parsed) = parse_frames(&raw, frames.len() as u32) {
            // Whatever parses stays inside the input.
            let total: usize = parsed.iter().map(|f| f.encoded_len()).sum();
            prop_assert_eq!(total, raw.len());
        }
    }

    #[test]
    fn decompress_never_panics(data in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = decompress_segment(&data, 1 << 16);
    }

    #[test]
    fn push_body_never_panics(tail in proptest::collection::vec(any::<u8>(), 0..256), flags in any::<u8>()) {
        let mut body = b"QPB1".to_vec();
        body.push(flags);
        body.extend_from_slice(&tail);
        let _ = decode_push_body(&body);
        let mut txn = b"QTB1".to_vec();
        txn.push(flags & 2);
        txn.extend_from_slice(&tail);
        let _ = decode_txn_body(&txn);
    }

    #[test]
    fn push_body_round_trip(groups in proptest::collection::vec(
        ("[a-z]{1,10}", "[A-Za-z0-9]{1,10}", proptest::collection::vec((proptest::option::of("[a-z0-9]{1,12}"), proptest::collection::vec(any::<u8>(), 0..64)), 0..5)),
        0..4)) {
        let groups: Vec<PushGroup> = groups.into_iter().map(|(q, p, items)| PushGroup {
            queue: q,
            partition: p,
            messages: GroupMessages::Items(items.into_iter().map(|(t, payload)| PushItem { transaction_id: t, payload }).collect()),
        }).collect();
        let body = encode_push_body(&groups, false).unwrap();
        prop_assert_eq!(decode_push_body(&body).unwrap().groups, groups);
    }

    #[test]
    fn pop_answer_round_trip_and_truncation(n in 0usize..4, bytes in proptest::collection::vec(any::<u8>(), 0..64), cut in any::<usize>()) {
        let answer = PopAnswer {
            own_json: b"{}".to_vec(),
            queue: "q".into(),
            lease_id: "lease".into(),
            consumer_group: "g".into(),
            claims: (0..n).map(|i| PopClaim {
                partition_id: i as u64,
                partition: format!("p{i}"),
                start: 0,
                end: 5,
                delivery_attempt: 1,
                records: vec![PopRecord { base_offset: 0, created_at_us: 5, count: 1, codec: 1, bytes: bytes.clone() }],
            }).collect(),
        };
        let enc = encode_pop_answer(&answer).unwrap();
        prop_assert_eq!(decode_pop_answer(&enc).unwrap(), answer);
        let cut = cut % enc.len();
        prop_assert!(decode_pop_answer(&enc[..cut]).is_err());
    }
}

trait CloneWithFlags<'a> {
    fn clone_with_flags(self) -> FrameRef<'a>;
}

impl<'a> CloneWithFlags<'a> for FrameRef<'a> {
    /// The flags a decoded frame carries: the encrypted bit as given, the
    /// trace and producer bits from the fields present.
    fn clone_with_flags(mut self) -> FrameRef<'a> {
        let mut flags = self.flags & queen_frames::FLAG_ENCRYPTED;
        if self.trace_id.is_some() {
            flags |= queen_frames::FLAG_TRACE;
        }
        if self.producer.is_some() {
            flags |= queen_frames::FLAG_PRODUCER;
        }
        self.flags = flags;
        self
    }
}
