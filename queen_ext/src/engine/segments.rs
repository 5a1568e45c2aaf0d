//! Reading segments back: rows of `queen.log_segments` loaded by base
//! offset, the one covering an offset, and the scans a pop reads (the
//! segment itself, decompressed and walked frame by frame, is
//! `wire::segment`).

use pgrx::spi::SpiClient;

use crate::pg::spi::{self, exec};
use crate::query;
use crate::wire::segment::Segment;

impl Segment {
    fn from_row(row: &pgrx::spi::SpiHeapTupleData<'_>) -> Segment {
        Self::from_columns(row).expect("a segment row")
    }

    /// The segment in the [`COLUMNS`] of `row`; None when they are null (an
    /// outer join that found none).
    pub fn from_columns(row: &pgrx::spi::SpiHeapTupleData<'_>) -> Option<Segment> {
        Some(Segment {
            base_offset: spi::opt(row, "base_offset")?,
            end_offset: spi::col(row, "end_offset"),
            count: spi::col(row, "frame_count"),
            created_at_us: spi::col(row, "created_us"),
            blob: spi::col(row, "blob"),
            raw: Default::default(),
        })
    }
}

/// The columns a segment is read from, by name.
pub const COLUMNS: &str = "base_offset, end_offset, frame_count, \
                       (extract(epoch FROM created_at) * 1000000)::int8 AS created_us, blob";

/// The segments of `pid` whose base offsets are `bases`.
pub fn load(client: &mut SpiClient<'_>, pid: i64, bases: &[i64]) -> Vec<Segment> {
    const SQL: &str = query!("segments_load");
    debug_assert!(SQL.contains(COLUMNS));
    exec(
        client,
        SQL,
        &[spi::INT8, spi::INT8_ARRAY],
        &[pid.into(), bases.to_vec().into()],
    )
    .map(|row| Segment::from_row(&row))
    .collect()
}

/// The segment holding `offset` in `pid`; None when it is gone.
pub fn covering(client: &mut SpiClient<'_>, pid: i64, offset: i64) -> Option<Segment> {
    scan_from(client, pid, offset, 1, 1)
        .segments
        .into_iter()
        .next()
}

/// What one scan of segments read.
pub struct Scan {
    pub segments: Vec<Segment>,
    /// The scan stopped at its segment limit: more segments may follow.
    pub more: bool,
}

/// The segments of `pid` holding the offsets `from .. from + want`, in
/// order, at most `limit` of them: the segment covering `from` (if any is
/// left) and those after it that start inside the range. Offsets are dense,
/// so no segment past the range is read. Gaps left by deleted segments are
/// skipped.
pub fn scan_from(client: &mut SpiClient<'_>, pid: i64, from: i64, want: i64, limit: i64) -> Scan {
    const SQL: &str = query!("segments_scan");
    debug_assert!(SQL.contains(COLUMNS));
    let rows = exec(
        client,
        SQL,
        &[spi::INT8, spi::INT8, spi::INT8, spi::INT8],
        &[pid.into(), from.into(), limit.into(), want.into()],
    );
    Scan::of(rows.map(|row| Segment::from_row(&row)), from, limit)
}

impl Scan {
    /// The scan of a query that read `segments` (at most `limit`) for the
    /// offsets from `from` on.
    pub fn of(segments: impl Iterator<Item = Segment>, from: i64, limit: i64) -> Scan {
        let mut scanned = 0i64;
        let segments = segments
            .inspect(|_| scanned += 1)
            .filter(|s| s.end_offset >= from)
            .collect();
        Scan {
            segments,
            more: scanned >= limit,
        }
    }
}
