//! Reads by offset: fetch and the partitions changed since a time. Neither
//! takes a lease or touches a cursor.

use pgrx::prelude::*;

use super::required;
use crate::engine::fetch;
use crate::pg::spi;
use crate::wire::datum::{JsonOut, JsonbArg};

/// Records of named partitions from given offsets, Queen's fetch body
/// `{"entries": [{"queue", "partition"?, "offset", "maxBytes"?}]}`; the
/// answer's entries are index-aligned with the request's. `maxWaitMs` is
/// checked and not waited on here (queen_front waits).
#[pg_extern]
fn fetch(body: Option<JsonbArg>) -> JsonOut {
    let req = fetch::parse_fetch(&required("body", body));
    JsonOut(spi::spi(|c| fetch::fetch(c, &req)).text)
}

/// The partitions of queues written since a time (or all, by name), a page
/// per entry with its cursor, and `safeTime`: Queen's body `{"entries":
/// [{"queue", "since"?, "after"?, "limit"?}]}`.
#[pg_extern]
fn partitions_changed(body: Option<JsonbArg>) -> JsonOut {
    let body = required("body", body);
    JsonOut::of(&spi::spi(|c| fetch::changed(c, &body)))
}
