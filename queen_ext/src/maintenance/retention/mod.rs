//! Retention: bounded steps, the leased cycle and the work list (the
//! operator's readers are in `reads`). Every step and the whole cycle can
//! be called from SQL (`api::internal`, `api::observe`).

pub mod cleanup;
pub mod compact;
pub mod cycle;
pub mod idle;
pub mod lease;
pub mod step;
pub mod watermark;
pub mod work_list;
pub mod worker;
