//! The one HTTP helper of the integration tests: requests to queen_front
//! answered as (status, body) whatever the status. A body is read
//! explicitly: empty is `Value::Null`, JSON is its value, anything else is
//! `Value::String` holding the text (so an assertion on a key fails and
//! shows what came). A transport error (no answer at all) panics.

use std::time::Duration;

use serde_json::Value;

/// The plain front-end under test (`make test` starts one and sets this).
pub fn base() -> String {
    std::env::var("QUEEN_HTTP").unwrap_or_else(|_| "http://127.0.0.1:6633".into())
}

/// An agent whose requests give up after 60 s (a long poll waits 30 s at
/// most in these tests).
pub fn agent() -> ureq::Agent {
    ureq::AgentBuilder::new()
        .timeout(Duration::from_secs(60))
        .build()
}

/// A response body as the tests read it (see the module's note).
pub fn body_value(text: String) -> Value {
    if text.is_empty() {
        return Value::Null;
    }
    serde_json::from_str(&text).unwrap_or(Value::String(text))
}

/// One answer: its status, its `retry-after` header, its body.
pub struct Answer {
    pub status: u16,
    pub retry_after: Option<String>,
    pub body: Value,
}

/// Sends `req` (with `body` as JSON when given) and reads the answer
/// whatever its status.
pub fn send_full(req: ureq::Request, body: Option<&Value>) -> Answer {
    let res = match body {
        Some(b) => req.send_json(b.clone()),
        None => req.call(),
    };
    let resp = match res {
        Ok(r) => r,
        Err(ureq::Error::Status(_, r)) => r,
        Err(e) => panic!("transport: {e}"),
    };
    let status = resp.status();
    let retry_after = resp.header("retry-after").map(str::to_owned);
    let text = resp.into_string().unwrap_or_default();
    Answer {
        status,
        retry_after,
        body: body_value(text),
    }
}

/// (status, body) of `req` sending `body` as it is (JSON or not) as
/// `application/json`.
pub fn send_text(req: ureq::Request, body: &str) -> (u16, Value) {
    let res = req
        .set("Content-Type", "application/json")
        .send_string(body);
    let resp = match res {
        Ok(r) => r,
        Err(ureq::Error::Status(_, r)) => r,
        Err(e) => panic!("transport: {e}"),
    };
    let status = resp.status();
    (status, body_value(resp.into_string().unwrap_or_default()))
}

/// (status, body) of `req`.
pub fn send(req: ureq::Request, body: Option<&Value>) -> (u16, Value) {
    let a = send_full(req, body);
    (a.status, a.body)
}

/// (status, body) of `method path` against [`base`].
pub fn request(method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
    send(agent().request(method, &format!("{}{path}", base())), body)
}

/// (status, body) of `GET path`.
pub fn get(path: &str) -> (u16, Value) {
    request("GET", path, None)
}

/// (status, body) of `POST path` with a JSON body.
pub fn post(path: &str, body: &Value) -> (u16, Value) {
    request("POST", path, Some(body))
}
