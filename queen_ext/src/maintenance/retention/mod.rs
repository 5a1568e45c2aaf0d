//! Retention: bounded steps, the leased cycle, the work list, and the
//! operator's readers. Every step and the whole cycle can be called from SQL
//! (`api::internal`, `api::observe`).

pub mod cleanup;
pub mod compact;
pub mod cycle;
pub mod explain;
pub mod idle;
pub mod lease;
pub mod step;
pub mod watermark;
pub mod work_list;
pub mod worker;
