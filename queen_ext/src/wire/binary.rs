//! The binary push body (QPB1) as push groups. Every payload must be one JSON
//! document; a pre-packed group (flag 8) is checked frame by frame and kept
//! as the client compressed it.

use queen_frames::push_body::{decode_push_body_within, decode_txn_body, GroupMessages, PushGroup};
use queen_frames::{parse_frames, FrameError, FLAG_ENCRYPTED};

use crate::pg::errors;
use crate::wire::json::check_name;
use crate::wire::payload::{check_json, Inflate};
use crate::wire::push::{GroupIn, ItemIn};

/// Parses a QPB1 body; returns the groups and whether the caller asked for
/// counts only.
pub fn parse_push_body(body: &[u8]) -> (Vec<GroupIn>, bool) {
    parse_push_body_within(body, &mut Inflate::new())
}

/// [`parse_push_body`] within what is left of `inflate`, which it spends.
pub fn parse_push_body_within(body: &[u8], inflate: &mut Inflate) -> (Vec<GroupIn>, bool) {
    let decoded = match decode_push_body_within(body, inflate.left()) {
        Ok(d) => d,
        Err(FrameError::TooLarge { .. }) => inflate.exceeded("binary push body"),
        Err(e) => errors::bad_binary("binary push body", e),
    };
    inflate.charge("binary push body", decoded.inflated);
    let max = crate::pg::settings::push_max_items();
    let total: usize = decoded.groups.iter().map(|g| g.len()).sum();
    if total == 0 {
        errors::invalid("items", "must not be empty");
    }
    if total > max {
        errors::invalid(
            "items",
            format!("{total} items is more than queen.push_max_items ({max})"),
        );
    }
    (groups_in(decoded.groups, inflate), decoded.counts_only)
}

/// A QTB1 body: its JSON head (the transaction body without its pushes),
/// its pushes as groups, and whether the caller asked for counts only.
pub fn parse_txn_body(body: &[u8]) -> (serde_json::Value, Vec<GroupIn>, bool) {
    let decoded =
        decode_txn_body(body).unwrap_or_else(|e| errors::bad_binary("binary transaction body", e));
    let head = std::str::from_utf8(&decoded.head).unwrap_or_else(|e| {
        errors::bad_binary("binary transaction body", format!("head is not UTF-8: {e}"))
    });
    let head = crate::wire::json::parse_value("binary transaction body head", head);
    let max = crate::pg::settings::push_max_items();
    let total: usize = decoded.groups.iter().map(|g| g.len()).sum();
    if total > max {
        errors::invalid(
            "items",
            format!("{total} items is more than queen.push_max_items ({max})"),
        );
    }
    (
        head,
        groups_in(decoded.groups, &mut Inflate::new()),
        decoded.counts_only,
    )
}

/// Decoded groups as push groups, every payload checked; items indexed
/// from 0 in the order written.
fn groups_in(decoded: Vec<PushGroup>, inflate: &mut Inflate) -> Vec<GroupIn> {
    let mut index = 0usize;
    let mut groups = Vec::with_capacity(decoded.len());
    for (gi, g) in decoded.into_iter().enumerate() {
        let queue = check_name(&format!("groups[{gi}].queue"), &g.queue).to_owned();
        let partition = check_name(&format!("groups[{gi}].partition"), &g.partition).to_owned();
        let mut items = Vec::new();
        let mut packed = None;
        match g.messages {
            GroupMessages::Items(list) => {
                for (k, it) in list.into_iter().enumerate() {
                    check_json(|| format!("groups[{gi}].items[{k}]"), &it.payload);
                    items.push(ItemIn {
                        index,
                        txn: it.transaction_id,
                        trace: None,
                        payload: it.payload,
                        encrypted: false,
                        message_id: None,
                    });
                    index += 1;
                }
            }
            GroupMessages::Packed { count, zstd } => {
                let what = format!("groups[{gi}]");
                let raw = inflate.take(&what, &zstd);
                let frames =
                    parse_frames(&raw, count).unwrap_or_else(|e| errors::bad_binary(&what, e));
                let mut id_text = uuid::Uuid::encode_buffer();
                for (k, f) in frames.iter().enumerate() {
                    let at = || format!("{what}.frames[{k}]");
                    if f.flags & FLAG_ENCRYPTED != 0 || f.trace_id.is_some() || f.producer.is_some()
                    {
                        errors::bad_binary(&at(), "a client frame carries flags 0 only (no trace, producer or encryption)");
                    }
                    if f.transaction_id.is_empty() {
                        errors::bad_binary(&at(), "transaction id is empty");
                    }
                    check_json(at, f.payload);
                    // A message the client gave no transaction id of its own
                    // carries its message id's text: minted, as a JSON push
                    // without one is, so it is not checked for duplicates.
                    let minted = *uuid::Uuid::from_bytes(f.message_id)
                        .hyphenated()
                        .encode_lower(&mut id_text)
                        == *f.transaction_id;
                    items.push(ItemIn {
                        index,
                        txn: (!minted).then(|| f.transaction_id.to_owned()),
                        trace: None,
                        payload: f.payload.to_vec(),
                        encrypted: false,
                        message_id: Some(f.message_id),
                    });
                    index += 1;
                }
                packed = Some(zstd);
            }
        }
        groups.push(GroupIn {
            queue,
            partition,
            items,
            packed,
        });
    }
    groups
}
