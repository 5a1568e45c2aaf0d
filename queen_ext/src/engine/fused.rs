//! Fused calls: many requests a front-end gathered (pushes, acks, lease
//! renewals) made in one transaction, each answered as it would have been
//! alone.
//!
//! Every request is parsed on its own first; one that does not parse gets
//! its own refusal. The rest are then made together in one subtransaction,
//! as one push or one ack whose locks are taken in the declared order:
//! pushes merged by partition (one segment per partition and producer, in
//! the order the requests came), acks as one batch; renewals one after the
//! other in lease order. If that subtransaction fails, nothing of it is kept and every
//! request is made again in a subtransaction of its own, so a request that
//! fails fails alone and the others commit. An ERROR that is the call's own
//! (a cancel, a statement timeout, a shutdown) ends the whole call.

use std::collections::HashMap;

use pgrx::spi::SpiClient;

use crate::catalog::switches::{self, Surface};
use crate::engine::{ack, push};
use crate::pg::errors;
use crate::pg::spi;
use crate::pg::subxact::{self, Caught};
use crate::wire::ack::{self as ack_wire, AckIn};
use crate::wire::binary;
use crate::wire::payload::Inflate;
use crate::wire::push::{self as push_wire, GroupIn, ItemOut};

/// An ERROR that is the call's, not one request's: a cancel or statement
/// timeout, a shutdown (class 57, but a paused surface, 57000, which is
/// each request's answer), a lack of resources (53) or a system error (58).
/// It is raised again for the whole call, never answered as one request's
/// refusal and never worked around by making the requests again (a
/// canceled call must stop).
fn call_must_stop(e: &Caught) -> bool {
    let s = e.sqlstate.as_str();
    (s.starts_with("57") && s != "57000") || s.starts_with("53") || s.starts_with("58")
}

/// `in_subtransaction`, raising again an ERROR that stops the call.
fn in_subtransaction<R>(f: impl FnOnce() -> R) -> Result<R, Caught> {
    match subxact::in_subtransaction(f) {
        Err(e) if call_must_stop(&e) => errors::raise(&e.sqlstate, &e.message),
        other => other,
    }
}

/// `catch`, raising again an ERROR that stops the call.
fn catch<R>(f: impl FnOnce() -> R) -> Result<R, Caught> {
    match subxact::catch(f) {
        Err(e) if call_must_stop(&e) => errors::raise(&e.sqlstate, &e.message),
        other => other,
    }
}

/// The answer to one request of a fused call: the JSON text it would have
/// been answered alone, or the ERROR it would have raised.
pub type Answer = Result<String, Caught>;

/// One push request: its body (JSON text or a binary push body) and the
/// producer its frames are stamped with.
pub struct PushRequest<'a> {
    pub body: &'a [u8],
    pub binary: bool,
    pub producer: Option<&'a str>,
}

/// A push request, parsed.
struct ParsedPush<'a> {
    groups: Vec<GroupIn>,
    counts_only: bool,
    producer: Option<&'a str>,
}

/// One request of a fused call, its decompression spent from the call's
/// budget.
fn parse_push(r: &PushRequest<'_>, inflate: &mut Inflate) -> (Vec<GroupIn>, bool) {
    if r.binary {
        return binary::parse_push_body_within(r.body, inflate);
    }
    let text = std::str::from_utf8(r.body)
        .unwrap_or_else(|_| errors::invalid("items", "is not valid UTF-8"));
    (push_wire::parse_items(text), false)
}

/// The answer of one push request from its items' results, as the request
/// alone is answered.
fn push_answer(out: &[ItemOut], counts_only: bool) -> String {
    if counts_only {
        let duplicate = out.iter().filter(|o| o.duplicate).count();
        return serde_json::json!({
            "count": out.len(),
            "queued": out.len() - duplicate,
            "duplicate": duplicate,
            "error": 0,
        })
        .to_string();
    }
    push_wire::answers_json(out)
}

/// Makes the push requests in one transaction; one answer per request, in
/// request order.
pub fn push_many(requests: &[PushRequest<'_>]) -> Vec<Answer> {
    let mut answers: Vec<Option<Answer>> = (0..requests.len()).map(|_| None).collect();
    let mut parsed: Vec<(usize, ParsedPush<'_>)> = Vec::with_capacity(requests.len());
    // What the requests decompress to counts against one budget: a request
    // past what the earlier ones left is refused alone.
    let mut inflate = Inflate::for_call();
    for (k, r) in requests.iter().enumerate() {
        match catch(|| parse_push(r, &mut inflate)) {
            Ok((groups, counts_only)) => parsed.push((
                k,
                ParsedPush {
                    groups,
                    counts_only,
                    producer: r.producer,
                },
            )),
            Err(e) => answers[k] = Some(Err(e)),
        }
    }
    if !parsed.is_empty() {
        match in_subtransaction(|| spi::spi(|c| push_merged(c, &parsed))) {
            Ok(each) => {
                for ((k, _), a) in parsed.iter().zip(each) {
                    answers[*k] = Some(Ok(a));
                }
            }
            Err(_) => {
                for (k, p) in &parsed {
                    answers[*k] = Some(in_subtransaction(|| {
                        spi::spi(|c| {
                            switches::refuse_if_paused(c, Surface::Push);
                            let out = push::push_groups(c, &p.groups, p.producer, true);
                            push_answer(&out, p.counts_only)
                        })
                    }));
                }
            }
        }
    }
    answers
        .into_iter()
        .map(|a| a.expect("every request answered"))
        .collect()
}

/// The parsed requests pushed together, as one push: their groups merged
/// by partition and producer with the items in request order, every
/// partition locked at once in the declared order. Answers one text per
/// request.
fn push_merged(client: &mut SpiClient<'_>, parsed: &[(usize, ParsedPush<'_>)]) -> Vec<String> {
    switches::refuse_if_paused(client, Surface::Push);
    // Items are numbered across the requests: request j's item i is
    // `base[j] + i`.
    let mut base = Vec::with_capacity(parsed.len());
    let mut total = 0usize;
    for (_, p) in parsed {
        base.push(total);
        total += p.groups.iter().map(|g| g.items.len()).sum::<usize>();
    }
    let mut owner: Vec<usize> = vec![0; total];
    let mut groups: Vec<GroupIn> = Vec::new();
    let mut producers: Vec<Option<&str>> = Vec::new();
    let mut at: HashMap<(&str, &str, Option<&str>), usize> = HashMap::new();
    for (j, (_, p)) in parsed.iter().enumerate() {
        for g in &p.groups {
            for it in &g.items {
                owner[base[j] + it.index] = j;
            }
            let items = g.items.iter().map(|it| push_wire::ItemIn {
                index: base[j] + it.index,
                ..it.clone()
            });
            match at.get(&(g.queue.as_str(), g.partition.as_str(), p.producer)) {
                Some(&n) => {
                    // Items of several requests: the client's packed frame
                    // holds only its own, so the segment is written anew.
                    groups[n].packed = None;
                    groups[n].items.extend(items);
                }
                None => {
                    at.insert(
                        (g.queue.as_str(), g.partition.as_str(), p.producer),
                        groups.len(),
                    );
                    groups.push(GroupIn {
                        queue: g.queue.clone(),
                        partition: g.partition.clone(),
                        items: items.collect(),
                        packed: g.packed.clone(),
                    });
                    producers.push(p.producer);
                }
            }
        }
    }
    let mut per_request: Vec<Vec<ItemOut>> = parsed.iter().map(|_| Vec::new()).collect();
    for mut o in push::push_groups_each(client, &groups, &producers, true) {
        let j = owner[o.index];
        o.index -= base[j];
        per_request[j].push(o);
    }
    per_request
        .into_iter()
        .zip(parsed)
        .map(|(mut out, (_, p))| {
            out.sort_by_key(|o| o.index);
            push_answer(&out, p.counts_only)
        })
        .collect()
}

/// Makes the ack requests (each a body `ack_text` takes) in one
/// transaction, as one ack: every cursor locked in the declared order, each
/// request answered its own acks' results.
pub fn ack_many(bodies: &[&str]) -> Vec<Answer> {
    let parsed: Vec<Result<Vec<AckIn>, Caught>> = bodies
        .iter()
        .map(|b| catch(|| ack_wire::parse_acks_text(b)))
        .collect();
    let mut base = Vec::with_capacity(parsed.len());
    let mut all: Vec<AckIn> = Vec::new();
    let mut owner: Vec<usize> = Vec::new();
    for (j, p) in parsed.iter().enumerate() {
        base.push(all.len());
        if let Ok(acks) = p {
            for a in acks {
                owner.push(j);
                all.push(AckIn {
                    index: all.len(),
                    ..a.clone()
                });
            }
        }
    }
    let together = if all.is_empty() {
        Ok(Vec::new())
    } else {
        in_subtransaction(|| spi::spi(|c| ack::ack_in_call(c, &all)))
    };
    match together {
        Ok(out) => {
            let mut per_request: Vec<Vec<_>> = parsed.iter().map(|_| Vec::new()).collect();
            for mut o in out {
                let j = owner[o.index];
                o.index -= base[j];
                per_request[j].push(o);
            }
            parsed
                .iter()
                .zip(per_request)
                .map(|(p, mut out)| match p {
                    Err(e) => Err(e.clone()),
                    Ok(_) => {
                        out.sort_by_key(|o| o.index);
                        Ok(ack_wire::answers_json(&out))
                    }
                })
                .collect()
        }
        Err(_) => parsed
            .iter()
            .map(|p| match p {
                Err(e) => Err(e.clone()),
                Ok(acks) => in_subtransaction(|| {
                    spi::spi(|c| ack_wire::answers_json(&ack::ack_in_call(c, acks)))
                }),
            })
            .collect(),
    }
}

/// Makes the lease renewals (lease id, seconds) in one transaction, one
/// after the other; one answer per request.
pub fn renew_many(requests: &[(&str, Option<i32>)]) -> Vec<Answer> {
    let parsed: Vec<Result<(uuid::Uuid, Option<i32>), Caught>> = requests
        .iter()
        .map(|(lease, seconds)| catch(|| (ack_wire::parse_renew(lease, *seconds), *seconds)))
        .collect();
    // Made in lease order, so two calls renewing the same leases take
    // their rows in one order.
    let mut order: Vec<usize> = (0..parsed.len()).collect();
    order.sort_by_key(|&k| parsed[k].as_ref().ok().map(|(lease, _)| *lease));
    let sorted: Vec<Result<(uuid::Uuid, Option<i32>), Caught>> =
        order.iter().map(|&k| parsed[k].clone()).collect();
    let answers = each_together(sorted, |c, (lease, seconds)| {
        serde_json::to_string(&ack::renew(c, *lease, *seconds).to_json())
            .expect("answers serialize")
    });
    let mut out: Vec<Option<Answer>> = (0..parsed.len()).map(|_| None).collect();
    for (k, a) in order.into_iter().zip(answers) {
        out[k] = Some(a);
    }
    out.into_iter()
        .map(|a| a.expect("every renewal answered"))
        .collect()
}

/// Runs `make` for every parsed request, one after the other in one
/// subtransaction; if that fails, each again in a subtransaction of its own.
/// A request that did not parse keeps its refusal.
fn each_together<T>(
    parsed: Vec<Result<T, Caught>>,
    make: impl Fn(&mut SpiClient<'_>, &T) -> String,
) -> Vec<Answer> {
    let ok: Vec<&T> = parsed.iter().filter_map(|p| p.as_ref().ok()).collect();
    let together = if ok.is_empty() {
        Ok(Vec::new())
    } else {
        in_subtransaction(|| spi::spi(|c| ok.iter().map(|t| make(c, t)).collect::<Vec<String>>()))
    };
    let mut together = together.map(Vec::into_iter);
    parsed
        .iter()
        .map(|p| match p {
            Err(e) => Err(e.clone()),
            Ok(t) => match &mut together {
                Ok(each) => Ok(each.next().expect("one answer per request")),
                Err(_) => in_subtransaction(|| spi::spi(|c| make(c, t))),
            },
        })
        .collect()
}
