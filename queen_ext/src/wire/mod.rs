//! What crosses the SQL boundary: JSON in (typed access with errors naming
//! the field) and out (fast writers beside their serde twins), and the datum
//! types the functions take and answer.

pub mod datum;
pub mod json;
pub mod payload;
