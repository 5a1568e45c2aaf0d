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

/// Who may call what through the proxy, as the proxy grants it (each shard
/// checks its own grants again): the answer of a shard's `queen.rights()`.
#[pg_extern(volatile)]
fn rights() -> queen_datum::JsonOut {
    let roles: Vec<String> = queen_datum::rights::ROLES
        .iter()
        .map(|(role, _)| (*role).to_owned())
        .collect();
    let answer = Spi::connect(|c| {
        let granted: Vec<serde_json::Value> = c
            .select(queen_datum::rights::GRANTED, None, &[roles.into()])?
            .map(|r| {
                Ok(
                    serde_json::json!({"role": r.get_by_name::<String, _>("role")?,
                                      "functions": r.get_by_name::<Vec<String>, _>("functions")?}),
                )
            })
            .collect::<Result<_, pgrx::spi::SpiError>>()?;
        let deprecated: Vec<serde_json::Value> = c
            .select(queen_datum::rights::DEPRECATED_NOW, None, &[])?
            .map(|r| {
                Ok(
                    serde_json::json!({"name": r.get_by_name::<String, _>("name")?,
                                      "note": r.get_by_name::<String, _>("note")?}),
                )
            })
            .collect::<Result<_, pgrx::spi::SpiError>>()?;
        Ok::<_, pgrx::spi::SpiError>(
            serde_json::json!({"roles": granted, "deprecated": deprecated}),
        )
    })
    .unwrap_or_else(|e| error!("reading the rights: {e}"));
    queen_datum::JsonOut(answer.to_string())
}
