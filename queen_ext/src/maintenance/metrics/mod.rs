//! The metrics series: the task that writes the per-minute rows (sample),
//! the figures a front-end reports of itself (report), and the readers of
//! the status and analytics routes (readers, params).

pub mod params;
pub mod readers;
pub mod report;
pub mod sample;
