//! Dead letters. A row is written narrow (a pointer to its frame) and widened
//! with the frame's contents only when its segment is about to be reclaimed,
//! so no failure disappears with its segment.

use std::collections::HashMap;

use pgrx::spi::SpiClient;

use crate::segments;
use crate::sql::{self, exec};

/// Widens every narrow dead letter of `pid` whose offset lies in
/// `from..=to`: message id, transaction id, trace id, payload and created_at
/// are copied out of the frames. Runs in the deleting step's transaction, so
/// an error anywhere leaves the rows and their segments as they were.
pub fn carry_forward(client: &mut SpiClient<'_>, pid: i64, from: i64, to: i64) {
    let narrow: Vec<(i64, i64)> = exec(
        client,
        "SELECT id, message_offset FROM queen.log_dlq
          WHERE partition_id = $1 AND message_offset BETWEEN $2 AND $3 AND created_at IS NULL",
        &[sql::INT8, sql::INT8, sql::INT8],
        &[pid.into(), from.into(), to.into()],
    )
    .map(|r| (r.get::<i64>(1).unwrap().unwrap(), r.get::<i64>(2).unwrap().unwrap()))
    .collect();
    if narrow.is_empty() {
        return;
    }
    let offsets: Vec<i64> = narrow.iter().map(|(_, o)| *o).collect();
    let bases: Vec<i64> = exec(
        client,
        "SELECT DISTINCT s.base_offset FROM unnest($2::int8[]) AS o(off)
           CROSS JOIN LATERAL (SELECT base_offset FROM queen.log_segments
                                WHERE partition_id = $1 AND base_offset <= o.off
                                ORDER BY base_offset DESC LIMIT 1) s",
        &[sql::INT8, sql::INT8_ARRAY],
        &[pid.into(), offsets.into()],
    )
    .map(|r| r.get::<i64>(1).unwrap().unwrap())
    .collect();
    let mut frames: HashMap<i64, (String, String, Option<String>, String, i64)> = HashMap::new();
    for seg in segments::load(client, pid, &bases) {
        for (i, f) in seg.frames().enumerate() {
            let offset = seg.base_offset + i as i64;
            if narrow.iter().any(|(_, o)| *o == offset) {
                frames.insert(
                    offset,
                    (
                        queen_frames::id_text(&f.message_id),
                        f.transaction_id.to_owned(),
                        f.trace_id.map(|t| queen_frames::id_text(&t)),
                        String::from_utf8_lossy(f.payload).into_owned(),
                        seg.created_at_us,
                    ),
                );
            }
        }
    }
    let (mut ids, mut mids, mut txns, mut traces, mut payloads, mut created) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (id, offset) in &narrow {
        let Some((mid, txn, trace, payload, at)) = frames.remove(offset) else {
            // Its segment is already gone: nothing left to copy.
            continue;
        };
        ids.push(*id);
        mids.push(mid);
        txns.push(txn);
        traces.push(trace);
        payloads.push(payload);
        created.push(at);
    }
    if ids.is_empty() {
        return;
    }
    exec(
        client,
        "UPDATE queen.log_dlq d
            SET message_id = w.mid::uuid, transaction_id = w.txn, trace_id = w.trace::uuid,
                payload = w.payload::jsonb, created_at = to_timestamp(w.us / 1000000.0)
           FROM unnest($1::int8[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int8[])
                AS w(id, mid, txn, trace, payload, us)
          WHERE d.id = w.id",
        &[sql::INT8_ARRAY, sql::TEXT_ARRAY, sql::TEXT_ARRAY, sql::TEXT_ARRAY, sql::TEXT_ARRAY, sql::INT8_ARRAY],
        &[ids.into(), mids.into(), txns.into(), traces.into(), payloads.into(), created.into()],
    );
}
