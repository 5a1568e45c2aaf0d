//! A stand-in PostgreSQL server speaking just enough of the protocol for the
//! front-end's calls: a startup without authentication, the extended query
//! protocol (Parse, Describe, Bind, Execute, Sync) answered by the reply the
//! test scripted for the statement's text, and CancelRequests, which it
//! records (and which end a cancelable statement with 57014). No TLS.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;

pub const TEXT: u32 = 25;
pub const JSON: u32 = 114;
pub const JSONB: u32 = 3802;
pub const INT4: u32 = 23;

const SSL_REQUEST: i32 = 80877103;
const CANCEL_REQUEST: i32 = 80877102;

/// What a statement answers.
#[derive(Clone, Debug)]
pub enum Reply {
    /// One row of one column of type `oid`, holding `value` (binary format);
    /// the statement takes parameters of the types `params`.
    Row {
        params: Vec<u32>,
        oid: u32,
        value: Vec<u8>,
    },
    /// An ERROR with this SQLSTATE and message.
    Error { sqlstate: String, message: String },
    /// Never answers: the statement runs until it is canceled or its
    /// connection closes.
    Hang,
    /// Planned as `answer` is; executed, it runs for `after` and then
    /// answers `answer` (None: for ever). A `cancelable` one that a
    /// CancelRequest reaches first ends with ERROR 57014 instead.
    Slow {
        answer: Box<Reply>,
        after: Option<Duration>,
        cancelable: bool,
    },
}

impl Reply {
    pub fn json(params: &[u32], value: serde_json::Value) -> Reply {
        Reply::Row {
            params: params.to_vec(),
            oid: JSON,
            value: value.to_string().into_bytes(),
        }
    }
    pub fn text(params: &[u32], value: &str) -> Reply {
        Reply::Row {
            params: params.to_vec(),
            oid: TEXT,
            value: value.as_bytes().to_vec(),
        }
    }
    pub fn slow(answer: Reply, after: Option<Duration>, cancelable: bool) -> Reply {
        Reply::Slow {
            answer: Box::new(answer),
            after,
            cancelable,
        }
    }
    /// How it is planned (Parse, Describe, Bind).
    fn planned(&self) -> &Reply {
        match self {
            Reply::Slow { answer, .. } => answer,
            other => other,
        }
    }
    pub fn error(sqlstate: &str, message: &str) -> Reply {
        Reply::Error {
            sqlstate: sqlstate.into(),
            message: message.into(),
        }
    }
}

#[derive(Default)]
struct Seen {
    /// (pattern, reply): the first pattern the statement's text contains
    /// decides.
    rules: Vec<(String, Reply)>,
    /// Backend keys handed out, one per connection, in order.
    keys: Vec<(i32, i32)>,
    /// Backend keys of the CancelRequests received.
    cancels: Vec<(i32, i32)>,
    /// What a CancelRequest wakes, per backend key.
    cancel_bells: HashMap<(i32, i32), Arc<Notify>>,
    /// Connections that ended (closed or terminated by the client).
    closed: usize,
    /// Each statement executed: its text and its parameters as sent (binary
    /// format; None for NULL).
    binds: Vec<(String, Vec<Option<Vec<u8>>>)>,
}

#[derive(Clone)]
pub struct FakePg {
    pub addr: SocketAddr,
    seen: Arc<Mutex<Seen>>,
}

impl FakePg {
    pub async fn start(rules: Vec<(&str, Reply)>) -> FakePg {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let pg = FakePg {
            addr: listener.local_addr().unwrap(),
            seen: Arc::new(Mutex::new(Seen {
                rules: rules.into_iter().map(|(p, r)| (p.to_owned(), r)).collect(),
                ..Seen::default()
            })),
        };
        let seen = Arc::clone(&pg.seen);
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let seen = Arc::clone(&seen);
                tokio::spawn(async move {
                    let _ = serve(stream, &seen).await;
                    seen.lock().unwrap().closed += 1;
                });
            }
        });
        pg
    }

    pub fn url(&self) -> String {
        format!(
            "host=127.0.0.1 port={} user=queen dbname=queen",
            self.addr.port()
        )
    }

    pub fn keys(&self) -> Vec<(i32, i32)> {
        self.seen.lock().unwrap().keys.clone()
    }
    pub fn cancels(&self) -> Vec<(i32, i32)> {
        self.seen.lock().unwrap().cancels.clone()
    }
    /// The parameters of the last executed statement whose text contains
    /// `pattern`.
    pub fn params_of(&self, pattern: &str) -> Option<Vec<Option<Vec<u8>>>> {
        let seen = self.seen.lock().unwrap();
        seen.binds
            .iter()
            .rev()
            .find(|(sql, _)| sql.contains(pattern))
            .map(|(_, p)| p.clone())
    }
    /// How many executed statements' texts contain `pattern`.
    pub fn executed(&self, pattern: &str) -> usize {
        let seen = self.seen.lock().unwrap();
        seen.binds
            .iter()
            .filter(|(sql, _)| sql.contains(pattern))
            .count()
    }
    /// Connections that ended, CancelRequest connections included.
    pub fn closed(&self) -> usize {
        self.seen.lock().unwrap().closed
    }

    fn reply_for(&self, sql: &str) -> Reply {
        let seen = self.seen.lock().unwrap();
        let reply = seen
            .rules
            .iter()
            .find(|(pattern, _)| sql.contains(pattern.as_str()))
            .map(|(_, r)| r.clone())
            .unwrap_or_else(|| Reply::error("XX000", &format!("no reply scripted for {sql}")));
        with_lock_timeout(reply, sql)
    }
}

/// A lane's call bounds its lock waits: it takes one more parameter, the
/// `lock_timeout` text, after the call's own.
fn with_lock_timeout(reply: Reply, sql: &str) -> Reply {
    match reply {
        Reply::Row {
            mut params,
            oid,
            value,
        } if sql.contains("set_config('lock_timeout'") => {
            params.push(TEXT);
            Reply::Row { params, oid, value }
        }
        Reply::Slow {
            answer,
            after,
            cancelable,
        } => Reply::Slow {
            answer: Box::new(with_lock_timeout(*answer, sql)),
            after,
            cancelable,
        },
        other => other,
    }
}

fn cstr(buf: &[u8], at: &mut usize) -> String {
    let end = buf[*at..].iter().position(|b| *b == 0).unwrap() + *at;
    let s = String::from_utf8_lossy(&buf[*at..end]).into_owned();
    *at = end + 1;
    s
}

fn message(out: &mut Vec<u8>, tag: u8, body: &[u8]) {
    out.push(tag);
    out.extend_from_slice(&(body.len() as i32 + 4).to_be_bytes());
    out.extend_from_slice(body);
}

fn error_response(out: &mut Vec<u8>, sqlstate: &str, text: &str) {
    let mut body = Vec::new();
    for (field, value) in [
        (b'S', "ERROR"),
        (b'V', "ERROR"),
        (b'C', sqlstate),
        (b'M', text),
    ] {
        body.push(field);
        body.extend_from_slice(value.as_bytes());
        body.push(0);
    }
    body.push(0);
    message(out, b'E', &body);
}

enum Step {
    Parse(String),
    Describe(String),
    Bind(String),
    Execute,
    Close,
}

async fn serve(mut stream: TcpStream, seen: &Arc<Mutex<Seen>>) -> std::io::Result<()> {
    let pg = FakePg {
        addr: stream.local_addr()?,
        seen: Arc::clone(seen),
    };
    // Startup, after an SSLRequest answered "no".
    loop {
        let len = stream.read_i32().await?;
        let code = stream.read_i32().await?;
        if code == SSL_REQUEST {
            stream.write_all(b"N").await?;
            continue;
        }
        if code == CANCEL_REQUEST {
            let pid = stream.read_i32().await?;
            let secret = stream.read_i32().await?;
            let mut seen = seen.lock().unwrap();
            seen.cancels.push((pid, secret));
            if let Some(bell) = seen.cancel_bells.get(&(pid, secret)) {
                bell.notify_one();
            }
            return Ok(());
        }
        let mut rest = vec![0; len as usize - 8];
        stream.read_exact(&mut rest).await?;
        break;
    }
    let key = {
        let mut seen = seen.lock().unwrap();
        let n = seen.keys.len() as i32 + 1;
        let key = (1000 + n, 7_000_000 + n);
        seen.keys.push(key);
        key
    };
    let bell = Arc::new(Notify::new());
    seen.lock()
        .unwrap()
        .cancel_bells
        .insert(key, Arc::clone(&bell));
    let mut out = Vec::new();
    message(&mut out, b'R', &0i32.to_be_bytes());
    let mut k = key.0.to_be_bytes().to_vec();
    k.extend_from_slice(&key.1.to_be_bytes());
    message(&mut out, b'K', &k);
    message(&mut out, b'Z', b"I");
    stream.write_all(&out).await?;

    let mut statements: HashMap<String, Reply> = HashMap::new();
    let mut texts: HashMap<String, String> = HashMap::new();
    let mut steps: Vec<Step> = Vec::new();
    let mut hung = false;
    loop {
        let tag = stream.read_u8().await?;
        let len = stream.read_i32().await?;
        let mut body = vec![0; len as usize - 4];
        stream.read_exact(&mut body).await?;
        let mut at = 0;
        match tag {
            b'P' => {
                let name = cstr(&body, &mut at);
                let sql = cstr(&body, &mut at);
                statements.insert(name.clone(), pg.reply_for(&sql));
                texts.insert(name.clone(), sql);
                steps.push(Step::Parse(name));
            }
            b'D' => {
                at += 1;
                steps.push(Step::Describe(cstr(&body, &mut at)));
            }
            b'B' => {
                let _portal = cstr(&body, &mut at);
                let name = cstr(&body, &mut at);
                let i16_at = |at: usize| i16::from_be_bytes([body[at], body[at + 1]]);
                let formats = i16_at(at) as usize;
                at += 2 + 2 * formats;
                let count = i16_at(at) as usize;
                at += 2;
                let mut params = Vec::with_capacity(count);
                for _ in 0..count {
                    let len = i32::from_be_bytes(body[at..at + 4].try_into().unwrap());
                    at += 4;
                    if len < 0 {
                        params.push(None);
                    } else {
                        params.push(Some(body[at..at + len as usize].to_vec()));
                        at += len as usize;
                    }
                }
                let sql = texts.get(&name).cloned().unwrap_or_default();
                seen.lock().unwrap().binds.push((sql, params));
                steps.push(Step::Bind(name));
            }
            b'E' => steps.push(Step::Execute),
            b'C' => steps.push(Step::Close),
            b'H' => {}
            b'X' => return Ok(()),
            b'S' => {
                if hung {
                    continue;
                }
                let mut out = Vec::new();
                let mut bound: Option<Reply> = None;
                for step in steps.drain(..) {
                    let reply = match &step {
                        Step::Parse(n) | Step::Describe(n) => {
                            statements.get(n).map(|r| r.planned().clone())
                        }
                        Step::Bind(n) => statements.get(n).cloned(),
                        Step::Execute => bound.clone(),
                        Step::Close => None,
                    };
                    // A slow statement: what came before it goes out, then
                    // it runs (for its time, or until canceled, or for ever).
                    let executing = matches!(step, Step::Execute);
                    let reply = match reply {
                        Some(Reply::Slow {
                            answer,
                            after,
                            cancelable,
                        }) if executing => {
                            stream.write_all(&out).await?;
                            out.clear();
                            match after {
                                Some(d) if !cancelable => {
                                    tokio::time::sleep(d).await;
                                    Some(*answer)
                                }
                                Some(d) => tokio::select! {
                                    _ = tokio::time::sleep(d) => Some(*answer),
                                    _ = bell.notified() => Some(Reply::error("57014", "canceling statement due to user request")),
                                },
                                None if cancelable => {
                                    bell.notified().await;
                                    Some(Reply::error(
                                        "57014",
                                        "canceling statement due to user request",
                                    ))
                                }
                                None => Some(Reply::Hang),
                            }
                        }
                        other => other,
                    };
                    match (step, reply) {
                        (_, Some(Reply::Hang)) => {
                            hung = true;
                            break;
                        }
                        (_, Some(Reply::Error { sqlstate, message })) => {
                            error_response(&mut out, &sqlstate, &message);
                            break;
                        }
                        (Step::Parse(_), _) => message(&mut out, b'1', &[]),
                        (Step::Describe(_), Some(Reply::Row { params, oid, .. })) => {
                            let mut p = (params.len() as i16).to_be_bytes().to_vec();
                            for t in &params {
                                p.extend_from_slice(&t.to_be_bytes());
                            }
                            message(&mut out, b't', &p);
                            let mut r = 1i16.to_be_bytes().to_vec();
                            r.extend_from_slice(b"v\0");
                            r.extend_from_slice(&0i32.to_be_bytes());
                            r.extend_from_slice(&0i16.to_be_bytes());
                            r.extend_from_slice(&oid.to_be_bytes());
                            r.extend_from_slice(&(-1i16).to_be_bytes());
                            r.extend_from_slice(&(-1i32).to_be_bytes());
                            r.extend_from_slice(&0i16.to_be_bytes());
                            message(&mut out, b'T', &r);
                        }
                        (Step::Bind(_), reply) => {
                            bound = reply;
                            message(&mut out, b'2', &[]);
                        }
                        (Step::Execute, Some(Reply::Row { oid, value, .. })) => {
                            let value = if oid == JSONB {
                                [&[1u8][..], &value].concat()
                            } else {
                                value
                            };
                            let mut d = 1i16.to_be_bytes().to_vec();
                            d.extend_from_slice(&(value.len() as i32).to_be_bytes());
                            d.extend_from_slice(&value);
                            message(&mut out, b'D', &d);
                            message(&mut out, b'C', b"SELECT 1\0");
                        }
                        (Step::Close, _) => message(&mut out, b'3', &[]),
                        _ => message(&mut out, b'n', &[]),
                    }
                }
                if hung {
                    continue;
                }
                message(&mut out, b'Z', b"I");
                stream.write_all(&out).await?;
            }
            _ => {}
        }
    }
}
