//! Who may call what: the group roles and their rights on the API, applied
//! from the one list in `queen_datum::rights`.

use pgrx::prelude::*;

/// Makes queen's group roles (`queen_app`, `queen_operator`, `queen_admin`),
/// gives each, and `pg_monitor`, exactly its rights on the functions of
/// schema `queen`, and describes the deprecated names as such. Run by
/// `CREATE EXTENSION queen` and by each update script; no role is granted
/// it.
#[pg_extern(schema = "queen_internal")]
fn grant_rights() {
    queen_datum::rights::ensure_roles("queen");
    queen_datum::rights::grant("queen");
    queen_datum::rights::mark_deprecated("queen");
}
