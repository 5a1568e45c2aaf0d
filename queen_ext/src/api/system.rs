//! The operator's switches (`catalog::switches`), read and flipped in the
//! shapes of Queen's system routes: `maintenance` (pushes), `pop`,
//! `kv-timers` and `ephemeral`. A paused push, KV call, timer schedule or
//! ephemeral write is refused with 57000 (the front-end answers 503 with
//! `Retry-After`); a paused pop answers empty; a paused fire leaves due
//! timers waiting.

use pgrx::prelude::*;
use serde_json::{json, Value};

use super::optional;
use crate::catalog::switches::{self, Surface};
use crate::pg::errors;
use crate::pg::settings;
use crate::pg::spi;
use crate::wire::datum::{JsonOut, JsonbArg};
use crate::wire::json::Obj;

/// The switches of `surface` (`maintenance`, `pop` or `kv-timers`); with
/// `changes` (`{"enabled": bool}`, or for `kv-timers` any of `kv`,
/// `timersSchedule`, `timersFire`) they are set first. Each switch is a row
/// of `queen.system_state`, obeyed by every session from the next call on.
#[pg_extern]
fn system_switches(surface: &str, changes: default!(Option<JsonbArg>, "NULL")) -> JsonOut {
    let setting = changes.is_some();
    let changes = optional("changes", changes);
    let o = Obj::new(&changes, "changes");
    let wanted: Vec<(Surface, bool)> = match (surface, setting) {
        (_, false) => Vec::new(),
        ("maintenance", true) => vec![(Surface::Push, enabled(&o))],
        ("pop", true) => vec![(Surface::Pop, enabled(&o))],
        // `enabled` here says the surface runs (Queen's ephemeral switch).
        ("ephemeral", true) => vec![(Surface::Ephemeral, !enabled(&o))],
        ("kv-timers", true) => {
            let flips: Vec<(Surface, bool)> = [
                ("kv", Surface::Kv),
                ("timersSchedule", Surface::TimersSchedule),
                ("timersFire", Surface::TimersFire),
            ]
            .into_iter()
            .filter_map(|(key, s)| o.opt_bool(key).map(|on| (s, !on)))
            .collect();
            if flips.is_empty() {
                errors::invalid(
                    "changes",
                    "needs at least one of kv, timersSchedule, timersFire (true or false)",
                );
            }
            flips
        }
        _ => unknown(surface),
    };
    if !setting && !matches!(surface, "maintenance" | "pop" | "kv-timers" | "ephemeral") {
        unknown(surface);
    }
    let (paused, totals) = spi::spi(|c| {
        for &(s, p) in &wanted {
            switches::set(c, s, p);
            if s == Surface::TimersFire && !p {
                crate::timers::wake::at_commit();
            }
        }
        let totals = (surface == "ephemeral").then(|| crate::ephemeral::ops::totals(c));
        (switches::read_all(c), totals)
    });
    let is = |s: Surface| paused.iter().any(|&(x, p)| x == s && p);
    if let Some(t) = totals {
        return JsonOut::of(&ephemeral_answer(setting, !is(Surface::Ephemeral), &t));
    }
    JsonOut::of(&answer(surface, setting, &is))
}

/// `{"enabled": bool}`, as a pause (true) of the surface.
fn enabled(o: &Obj<'_>) -> bool {
    o.opt_bool("enabled")
        .unwrap_or_else(|| errors::invalid("changes.enabled", "(true or false) is required"))
}

fn unknown(surface: &str) -> ! {
    errors::invalid(
        "surface",
        format!("{surface:?} is not one of maintenance, pop, kv-timers, ephemeral"),
    )
}

/// The ephemeral switch in Queen's shape. There is one database, so no
/// per-tenant grant: `grantedTenants` is 0 and `requireGrant` false; no
/// byte budget over all queues (`cellMaxBytes` null: each queue has its
/// own maxBytes). `epoch` is the last incarnation drawn.
fn ephemeral_answer(setting: bool, on: bool, t: &crate::ephemeral::ops::Totals) -> Value {
    if setting {
        return json!({
            "ephemeralEnabled": on,
            "mirrored": true,
            "message": if on {
                "Ephemeral queues ENABLED."
            } else {
                "Ephemeral queues DISABLED: their writes answer 503 (Retry-After) until enabled; \
                 their reads still answer, and nothing they hold is dropped."
            },
        });
    }
    json!({
        "ephemeralEnabled": on,
        "cellBytes": t.bytes,
        "cellMaxBytes": Value::Null,
        "queues": t.queues,
        "grantedTenants": 0,
        "requireGrant": false,
        "epoch": t.epoch,
        "durability": crate::ephemeral::ops::DURABILITY,
    })
}

fn answer(surface: &str, setting: bool, is_paused: &dyn Fn(Surface) -> bool) -> Value {
    let push = is_paused(Surface::Push);
    let pop = is_paused(Surface::Pop);
    match surface {
        "maintenance" => {
            // Nothing is ever buffered: a paused push is refused, not kept.
            let mut a = json!({
                "maintenanceMode": push,
                "popMaintenanceMode": pop,
                "bufferedMessages": 0,
                "bufferHealthy": true,
            });
            if setting {
                a["message"] = json!(if push {
                    "Maintenance mode ENABLED. Pushes are refused (503, Retry-After) until it is disabled."
                } else {
                    "Maintenance mode DISABLED. Pushes are accepted."
                });
            } else {
                a["bufferStats"] = Value::Null;
            }
            a
        }
        "pop" => json!({
            "popMaintenanceMode": pop,
            "message": if pop {
                "Pop maintenance mode is ON. Every pop answers empty."
            } else {
                "Pop maintenance mode is OFF. Normal operation."
            },
        }),
        _ => {
            let fire = !is_paused(Surface::TimersFire) && settings::timers_fire_enabled();
            let mut a = json!({
                "kvEnabled": !is_paused(Surface::Kv),
                "timersScheduleEnabled": !is_paused(Surface::TimersSchedule)
                    && settings::timers_schedule_enabled(),
                "timersFireEnabled": fire,
            });
            if setting {
                a["mirrored"] = json!(true);
                a["message"] = json!(if fire {
                    "kv/timers switches updated"
                } else {
                    "TIMER FIRE IS PAUSED. Nothing is lost: due timers wait and are delivered, \
                     oldest first, once it is resumed."
                });
            }
            a
        }
    }
}
