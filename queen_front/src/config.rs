//! Configuration, read once from the environment. A value that does not
//! parse, or a combination that can not be served, is an error at start.

use std::time::Duration;

#[derive(Debug, Clone)]
pub struct Config {
    /// libpq connection string or URL; `DATABASE_URL`, else built from the
    /// `PG*` variables.
    pub database_url: String,
    pub host: String,
    pub port: u16,
    /// Database connections, shared out among the event-loop threads.
    pub pool_size: usize,
    /// Event-loop threads, each serving the connections handed to it.
    pub threads: usize,
    pub request_timeout: Duration,
    /// Bearer tokens: on when a key is set.
    pub jwt: JwtConfig,
    /// Largest request body accepted (413 beyond).
    pub body_limit_bytes: usize,
    /// How often the shared poller of a long-polled key asks the database.
    pub long_poll_period: Duration,
    /// Long polls waiting at once, over all keys (`QUEEN_MAX_WAITERS`).
    pub max_waiters: usize,
    /// Serve a non-loopback `HOST` without authentication
    /// (`QUEEN_ALLOW_UNAUTHENTICATED=1`).
    pub allow_unauthenticated: bool,
    /// Origins allowed to make cross-origin requests (`QUEEN_CORS_ORIGINS`).
    pub cors_origins: crate::cors::Origins,
    /// Request fusion (`QUEEN_FUSION`, `QUEEN_FUSION_MAX_*`).
    pub fusion: FusionConfig,
    /// How often the front-end's own figures go to `queen.worker_metrics`
    /// (`QUEEN_METRICS_REPORT_MS`, 60000; 0, None: never).
    pub metrics_report: Option<Duration>,
    /// Serve the dashboard at `/` (`QUEEN_DASHBOARD`, on; `off`: not).
    pub dashboard: bool,
    /// How long one queue listing serves the scrapes of
    /// `/metrics/prometheus` (`QUEEN_METRICS_QUEUES_MS`, 5000; 0: each
    /// scrape lists them).
    pub metrics_queues_age: Duration,
    /// Queues a scrape exports at most, by name (`QUEEN_METRICS_MAX_QUEUES`,
    /// 1000); the rest are counted in `queen_queues_omitted`.
    pub metrics_max_queues: usize,
}

/// How bearer tokens are checked (`auth.rs`).
#[derive(Clone, Default)]
pub struct JwtConfig {
    /// HS256 secret (`JWT_SECRET`).
    pub secret: Option<String>,
    /// RS256 public key, PEM (`JWT_PUBLIC_KEY`, or the file
    /// `QUEEN_JWT_PUBLIC_KEY_FILE`).
    pub public_key_pem: Option<String>,
    /// Seconds of clock difference allowed on `exp` and `nbf`.
    pub leeway_s: u64,
    /// When set, the `iss` every token must carry.
    pub issuer: Option<String>,
    /// When set, an `aud` every token must carry.
    pub audience: Option<String>,
}

impl JwtConfig {
    pub fn is_on(&self) -> bool {
        self.secret.is_some() || self.public_key_pem.is_some()
    }
}

/// How the lanes of request fusion gather requests into calls.
#[derive(Debug, Clone)]
pub struct FusionConfig {
    /// `QUEEN_FUSION=off` sends every request as a call of its own.
    pub on: bool,
    /// Most requests in one call.
    pub max_items: usize,
    /// Most body bytes in one call (a larger request goes alone).
    pub max_bytes: usize,
    /// A request whose body holds at least this many bytes makes its own
    /// call at once, as with fusion off, whatever is in flight.
    pub alone_bytes: usize,
    /// Most calls of one lane in flight at once, per event-loop thread.
    pub max_inflight: usize,
    /// How long a call that holds a lane's slot waits on a row lock
    /// (`lock_timeout`) before its requests give the slot back and make
    /// their own calls, each waiting within its own deadline.
    pub lock_wait: Duration,
}

/// Keys stay out of debug output.
impl std::fmt::Debug for JwtConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtConfig")
            .field("secret", &self.secret.as_ref().map(|_| "(set)"))
            .field(
                "public_key_pem",
                &self.public_key_pem.as_ref().map(|_| "(set)"),
            )
            .field("leeway_s", &self.leeway_s)
            .field("issuer", &self.issuer)
            .field("audience", &self.audience)
            .finish()
    }
}

/// The RS256 public key: `JWT_PUBLIC_KEY` holds the PEM (its line breaks
/// may be written `\n`), `QUEEN_JWT_PUBLIC_KEY_FILE` names a file holding
/// it; not both.
fn public_key(vars: &Vars) -> Result<Option<String>, String> {
    match (
        vars.get("JWT_PUBLIC_KEY"),
        vars.get("QUEEN_JWT_PUBLIC_KEY_FILE"),
    ) {
        (Some(_), Some(_)) => {
            Err("set JWT_PUBLIC_KEY or QUEEN_JWT_PUBLIC_KEY_FILE, not both".into())
        }
        (Some(pem), None) if !pem.contains('\n') => Ok(Some(pem.replace("\\n", "\n"))),
        (Some(pem), None) => Ok(Some(pem)),
        (None, Some(path)) => std::fs::read_to_string(&path)
            .map(Some)
            .map_err(|e| format!("QUEEN_JWT_PUBLIC_KEY_FILE={path:?}: {e}")),
        (None, None) => Ok(None),
    }
}

/// The database's connection string: `DATABASE_URL`, else one built from
/// the `PG*` variables.
fn database_url(vars: &Vars) -> String {
    match vars.get("DATABASE_URL") {
        Some(url) => url,
        None => format!(
            "host={} port={} user={} dbname={}{}",
            vars.get("PGHOST").unwrap_or_else(|| "127.0.0.1".into()),
            vars.get("PGPORT").unwrap_or_else(|| "6532".into()),
            vars.get("PGUSER").unwrap_or_else(|| "postgres".into()),
            vars.get("PGDATABASE").unwrap_or_else(|| "queen".into()),
            vars.get("PGPASSWORD")
                .map(|p| format!(" password={p}"))
                .unwrap_or_default(),
        ),
    }
}

/// The bearer-token settings.
fn jwt(vars: &Vars) -> Result<JwtConfig, String> {
    Ok(JwtConfig {
        secret: vars.get("JWT_SECRET"),
        public_key_pem: public_key(vars)?,
        leeway_s: vars.parsed("QUEEN_JWT_LEEWAY_S", 30)?,
        issuer: vars.get("QUEEN_JWT_ISSUER"),
        audience: vars.get("QUEEN_JWT_AUDIENCE"),
    })
}

/// Most requests the extension takes in one fused call by default
/// (`queen.fused_max_requests`).
const FUSED_MAX_REQUESTS: usize = 1000;

/// Bodies of at least this many bytes skip the lanes
/// (`QUEEN_FUSION_ALONE_BYTES`): an ack of 100 messages (about 13 kB) or a
/// push of 100 (about 27 kB) goes alone, a push of 10 (about 3 kB) fuses.
/// Such a request shares little with others, and in the lane it waited for
/// the call in flight, one call at a time (`QUEEN_BENCH_ONLY=pop make bench
/// WHAT=http`: pops and batch acks of 100, two consumers; bench/RESULTS.md).
const ALONE_BYTES: usize = 8 * 1024;

/// How long a call holding a lane's slot waits on a row lock
/// (`QUEEN_FUSION_LOCK_WAIT_MS`): a push to a partition another
/// transaction holds then leaves the lane after this, and waits for the
/// lock within its own deadline while the lane goes on. Not measured: well
/// above the commit of a fused call that holds the same partition (a few
/// milliseconds here), well below a request timeout.
const LOCK_WAIT_MS: usize = 100;

/// The fusion settings. The defaults come from `make bench WHAT=fusion`
/// (bench/RESULTS.md): one call in flight per lane does better than two
/// (fused calls to the same partitions wait on each other's row locks
/// until the first commits, so a second call in flight only makes each
/// smaller); 256 requests per call is more than 256 connections gather.
fn fusion(vars: &Vars) -> Result<FusionConfig, String> {
    let on = match vars.get("QUEEN_FUSION").as_deref() {
        None | Some("on") | Some("1") | Some("true") => true,
        Some("off") | Some("0") | Some("false") => false,
        Some(other) => return Err(format!("QUEEN_FUSION={other:?} is not on or off")),
    };
    let at_least_one = |name: &str, default: usize| match vars.parsed(name, default)? {
        0 => Err(format!("{name} must be at least 1")),
        n => Ok(n),
    };
    let max_items = at_least_one("QUEEN_FUSION_MAX_ITEMS", 256)?;
    if max_items > FUSED_MAX_REQUESTS {
        return Err(format!(
            "QUEEN_FUSION_MAX_ITEMS={max_items} is more than one fused call takes \
             ({FUSED_MAX_REQUESTS}, queen.fused_max_requests' default)"
        ));
    }
    Ok(FusionConfig {
        on,
        max_items,
        max_bytes: at_least_one("QUEEN_FUSION_MAX_BYTES", 4 * 1024 * 1024)?,
        alone_bytes: at_least_one("QUEEN_FUSION_ALONE_BYTES", ALONE_BYTES)?,
        max_inflight: at_least_one("QUEEN_FUSION_MAX_INFLIGHT", 1)?,
        lock_wait: Duration::from_millis(
            at_least_one("QUEEN_FUSION_LOCK_WAIT_MS", LOCK_WAIT_MS)? as u64
        ),
    })
}

/// The variables, as read: an empty value counts as unset.
struct Vars<'a>(&'a dyn Fn(&str) -> Option<String>);

impl Vars<'_> {
    fn get(&self, name: &str) -> Option<String> {
        (self.0)(name).filter(|v| !v.is_empty())
    }

    fn parsed<T: std::str::FromStr>(&self, name: &str, default: T) -> Result<T, String> {
        match self.get(name) {
            None => Ok(default),
            Some(v) => v.parse().map_err(|_| format!("{name}={v:?} is not valid")),
        }
    }
}

impl Config {
    pub fn from_env() -> Result<Config, String> {
        Config::from_lookup(&|name| std::env::var(name).ok())
    }

    /// The configuration `lookup` describes (the environment, or a test's
    /// variables).
    pub fn from_lookup(lookup: &dyn Fn(&str) -> Option<String>) -> Result<Config, String> {
        let vars = Vars(lookup);
        let var = |name: &str| vars.get(name);
        let database_url = database_url(&vars);
        let allow_unauthenticated = match var("QUEEN_ALLOW_UNAUTHENTICATED").as_deref() {
            None | Some("0") | Some("false") => false,
            Some("1") | Some("true") => true,
            Some(other) => {
                return Err(format!(
                    "QUEEN_ALLOW_UNAUTHENTICATED={other:?} is not 1 or 0"
                ))
            }
        };
        let dashboard = match var("QUEEN_DASHBOARD").as_deref() {
            None | Some("on") | Some("1") => true,
            Some("off") | Some("0") => false,
            Some(other) => return Err(format!("QUEEN_DASHBOARD={other:?} is not on or off")),
        };
        let config = Config {
            database_url,
            host: var("HOST").unwrap_or_else(|| "127.0.0.1".into()),
            port: vars.parsed("PORT", 6632)?,
            pool_size: vars.parsed("QUEEN_POOL_SIZE", 16)?,
            threads: vars
                .parsed(
                    "QUEEN_THREADS",
                    std::thread::available_parallelism()
                        .map(|n| n.get())
                        .unwrap_or(1),
                )?
                .max(1),
            request_timeout: Duration::from_millis(
                vars.parsed("QUEEN_REQUEST_TIMEOUT_MS", 35_000)?,
            ),
            jwt: jwt(&vars)?,
            body_limit_bytes: vars.parsed("QUEEN_BODY_LIMIT_BYTES", 16 * 1024 * 1024)?,
            long_poll_period: Duration::from_millis(vars.parsed("QUEEN_LONG_POLL_MS", 500)?),
            // Not measured: room for many consumers' long polls, few enough
            // that their state (a key and a poller each) stays small.
            max_waiters: match vars.parsed("QUEEN_MAX_WAITERS", 10_000)? {
                0 => return Err("QUEEN_MAX_WAITERS must be at least 1".into()),
                n => n,
            },
            cors_origins: crate::cors::Origins::parse(
                &var("QUEEN_CORS_ORIGINS").unwrap_or_default(),
            )?,
            allow_unauthenticated,
            fusion: fusion(&vars)?,
            metrics_report: match vars.parsed("QUEEN_METRICS_REPORT_MS", 60_000u64)? {
                0 => None,
                ms => Some(Duration::from_millis(ms)),
            },
            dashboard,
            metrics_queues_age: Duration::from_millis(
                vars.parsed("QUEEN_METRICS_QUEUES_MS", 5_000u64)?,
            ),
            metrics_max_queues: vars.parsed("QUEEN_METRICS_MAX_QUEUES", 1_000usize)?,
        };
        config.guard_unauthenticated()
    }

    /// Without authentication: the `Host` of every request checked on
    /// loopback, and an error for any other `HOST` not explicitly allowed.
    fn guard_unauthenticated(mut self) -> Result<Config, String> {
        if !self.jwt.is_on() && is_loopback(&self.host) {
            self.cors_origins = self.cors_origins.guard_hosts();
        }
        if !self.jwt.is_on() && !self.allow_unauthenticated && !is_loopback(&self.host) {
            return Err(format!(
                "HOST={} is not a loopback address and no authentication is configured: \
                 set JWT_SECRET, JWT_PUBLIC_KEY or QUEEN_JWT_PUBLIC_KEY_FILE, or \
                 QUEEN_ALLOW_UNAUTHENTICATED=1 to serve every route to anyone who can reach it",
                self.host
            ));
        }
        Ok(self)
    }
}

/// Whether `host` only listens on this machine: `localhost`, 127.0.0.0/8,
/// `::1` (bracketed or not, IPv4-mapped or not).
pub fn is_loopback(host: &str) -> bool {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    bare.eq_ignore_ascii_case("localhost")
        || bare
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.to_canonical().is_loopback())
}
