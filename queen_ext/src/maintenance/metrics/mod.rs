//! The metrics series: the task that writes the per-minute rows (sample),
//! the figures a front-end reports of itself (report), and the parameters
//! of the status and analytics routes (params); their readers are in
//! `reads`.

pub mod params;
pub mod report;
pub mod sample;
