//! Who may call what through the proxy: the shard's own list
//! (`queen_datum::rights`), so the proxy refuses a caller what a shard would.

use pgrx::prelude::*;

/// Makes queen's group roles, gives each, and `pg_monitor`, exactly its
/// rights on the proxy's functions of schema `queen`, and describes the
/// deprecated names as such. Run by `CREATE EXTENSION queen_proxy` and by
/// each update script; no role is granted it.
#[pg_extern(schema = "queen_remote")]
fn grant_rights() {
    queen_datum::rights::ensure_roles("queen_proxy");
    queen_datum::rights::grant("queen");
    queen_datum::rights::mark_deprecated("queen");
}
