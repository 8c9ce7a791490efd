//! fluss-rs-compat drives Apache Fluss's Rust client (crate `fluss-rs`,
//! unchanged, public API only) through the producer-offsets registry of a
//! sidecar or a Fluss cluster, and prints one line per step:
//!
//! ```text
//! PASS <scenario>.<step> key=value ...
//! FAIL <scenario>.<step> ... reason=<why>
//! RESULT PASS|FAIL
//! ```
//!
//! Exit status 0 for RESULT PASS, 1 for RESULT FAIL, 2 for a usage error.
//! The client has no request timeout, so every call is bounded here by
//! `--timeout`. See README.md beside this file.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::future::Future;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use fluss::client::{FlussAdmin, FlussConnection};
use fluss::config::Config;
use fluss::error::Error;
use fluss::metadata::{
    BucketOffset, ClusterHealth, ProducerOffsets, ProducerTableOffsets, RegisterProducerResult,
};

const USAGE: &str = "usage: fluss-rs-compat --bootstrap HOST:PORT [--user U --password P] \
[--id-suffix S] [--timeout SECONDS] [--default-ttl-ms MS] SCENARIO...\nscenarios: ping offsets health";

struct Options {
    bootstrap: String,
    user: Option<String>,
    password: Option<String>,
    suffix: String,
    timeout: Duration,
    default_ttl_ms: i64,
    scenarios: Vec<String>,
}

fn parse_args(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        bootstrap: String::new(),
        user: None,
        password: None,
        suffix: random_suffix(),
        timeout: Duration::from_secs(30),
        default_ttl_ms: 24 * 60 * 60 * 1000,
        scenarios: Vec::new(),
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match a.as_str() {
            "--bootstrap" => o.bootstrap = value(a)?,
            "--user" => o.user = Some(value(a)?),
            "--password" => o.password = Some(value(a)?),
            "--id-suffix" => o.suffix = value(a)?,
            "--timeout" => {
                let s: u64 = value(a)?.parse().map_err(|e| format!("--timeout: {e}"))?;
                o.timeout = Duration::from_secs(s);
            }
            "--default-ttl-ms" => {
                o.default_ttl_ms = value(a)?
                    .parse()
                    .map_err(|e| format!("--default-ttl-ms: {e}"))?
            }
            "ping" | "offsets" | "health" => o.scenarios.push(a.clone()),
            _ => return Err(format!("unknown argument {a:?}")),
        }
    }
    if o.bootstrap.is_empty() {
        return Err("--bootstrap is required".into());
    }
    if o.user.is_some() != o.password.is_some() {
        return Err("--user and --password go together".into());
    }
    if o.scenarios.is_empty() {
        return Err("name at least one scenario".into());
    }
    Ok(o)
}

/// A short suffix that differs between runs, so that reruns against one
/// server never meet each other's producer ids.
fn random_suffix() -> String {
    let n = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos() as u64
        ^ (u64::from(std::process::id()) << 20);
    format!("{:x}", n & 0xff_ffff)
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis() as i64
}

/// escape writes a value for a key=value pair: '%', whitespace and control
/// characters become %XX (UTF-8 bytes), so a value never splits a line or a
/// pair. The empty string is written as ''.
fn escape(s: &str) -> String {
    if s.is_empty() {
        return "''".into();
    }
    let mut out = String::new();
    for c in s.chars() {
        if c == '%' || c.is_whitespace() || c.is_control() {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                let _ = write!(out, "%{b:02X}");
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// escape_message writes an error text, which runs to the end of the line:
/// only control characters (a coordinator's stack trace has newlines) are
/// written as %XX.
fn escape_message(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_control() {
            let _ = write!(out, "%{:02X}", c as u32);
        } else {
            out.push(c);
        }
    }
    out
}

/// The report: one line per step on stdout, and whether any step failed.
struct Report {
    failed: bool,
}

impl Report {
    fn pass(&mut self, step: &str, details: &str) {
        println!("PASS {step} {details}");
    }
    fn fail(&mut self, step: &str, details: &str, reason: &str) {
        self.failed = true;
        if details.is_empty() {
            println!("FAIL {step} reason={}", escape_message(reason));
        } else {
            println!("FAIL {step} {details} reason={}", escape_message(reason));
        }
    }
    /// fail_error reports a call that failed with e where it should not
    /// have: what fluss-rs reported, then the reason with its message.
    fn fail_error(&mut self, step: &str, details: &str, e: &Error, want: &str) {
        let (fields, message) = describe_error(e);
        let d = if details.is_empty() {
            fields
        } else {
            format!("{details} {fields}")
        };
        self.fail(step, &d, &format!("{want}: {message}"));
    }
    /// check prints PASS when ok is None, FAIL with the reason otherwise.
    fn check(&mut self, step: &str, details: &str, failure: Option<String>) {
        match failure {
            None => self.pass(step, details),
            Some(reason) => self.fail(step, details, &reason),
        }
    }
}

/// bounded runs one client call within the timeout; a call still running
/// then is dropped and reported as an error string.
async fn bounded<T>(
    timeout: Duration,
    f: impl Future<Output = Result<T, Error>>,
) -> Result<Result<T, Error>, String> {
    tokio::time::timeout(timeout, f).await.map_err(|_| {
        format!(
            "no answer within {} s (the client has no request timeout of its own)",
            timeout.as_secs()
        )
    })
}

/// variant is the name of an Error variant, from its Debug form.
fn variant(e: &Error) -> String {
    let d = format!("{e:?}");
    d.split(|c: char| c == ' ' || c == '{' || c == '(')
        .next()
        .unwrap_or("")
        .to_string()
}

/// describe_error says what fluss-rs reports for a failed call: the
/// variant, and for an API error the raw code, the FlussError the client
/// maps it to and whether it calls it retriable; then, apart, the message.
fn describe_error(e: &Error) -> (String, String) {
    match e {
        Error::FlussAPIError { api_error } => (
            format!(
                "outcome=Err error={} code={} fluss_error={} retriable={}",
                variant(e),
                api_error.code,
                e.api_error()
                    .map(|f| format!("{f:?}"))
                    .unwrap_or_else(|| "none".into()),
                e.is_retriable()
            ),
            api_error.message.clone(),
        ),
        other => (
            format!(
                "outcome=Err error={} retriable={}",
                variant(other),
                other.is_retriable()
            ),
            other.to_string(),
        ),
    }
}

fn describe_register(r: &Option<RegisterProducerResult>) -> String {
    match r {
        Some(v) => format!("outcome=Ok(Some({v:?}))"),
        None => "outcome=Ok(None)".into(),
    }
}

/// A bucket's identity and offset, for comparing answers as sets (a Fluss
/// coordinator answers tables and buckets in hash-map order).
type Entry = (i64, Option<i64>, i32, Option<i64>);

fn entries(tables: &[ProducerTableOffsets]) -> BTreeSet<Entry> {
    let mut set = BTreeSet::new();
    for t in tables {
        for b in &t.bucket_offsets {
            set.insert((t.table_id, b.partition_id, b.bucket_id, b.log_end_offset));
        }
    }
    set
}

/// format_offsets writes T<table>[P<partition>]B<bucket>:<offset>, sorted,
/// comma-separated, or "none".
fn format_offsets(tables: &[ProducerTableOffsets]) -> String {
    let set = entries(tables);
    if set.is_empty() {
        return "none".into();
    }
    set.iter()
        .map(|(t, p, b, o)| {
            let p = p.map(|p| format!("P{p}")).unwrap_or_default();
            let o = o.map(|o| o.to_string()).unwrap_or_else(|| "none".into());
            format!("T{t}{p}B{b}:{o}")
        })
        .collect::<Vec<_>>()
        .join(",")
}

fn describe_get(g: &ProducerOffsets) -> String {
    format!(
        "outcome=Ok producer_id={} expiration_time={} tables={} offsets={}",
        g.producer_id
            .as_deref()
            .map(escape)
            .unwrap_or_else(|| "None".into()),
        g.expiration_time
            .map(|e| e.to_string())
            .unwrap_or_else(|| "None".into()),
        g.table_offsets.len(),
        format_offsets(&g.table_offsets)
    )
}

/// describe_health writes a ClusterHealth: the status as fluss-rs names
/// it, its wire value, and the four replica counts.
fn describe_health(h: &ClusterHealth) -> String {
    format!(
        "outcome=Ok status={:?} status_code={} num_replicas={} in_sync_replicas={} \
num_leader_replicas={} active_leader_replicas={}",
        h.status,
        h.status.to_i32(),
        h.num_replicas,
        h.in_sync_replicas,
        h.num_leader_replicas,
        h.active_leader_replicas
    )
}

fn table(id: i64, buckets: &[(Option<i64>, i32, Option<i64>)]) -> ProducerTableOffsets {
    ProducerTableOffsets {
        table_id: id,
        bucket_offsets: buckets
            .iter()
            .map(|&(partition_id, bucket_id, log_end_offset)| BucketOffset {
                partition_id,
                bucket_id,
                log_end_offset,
            })
            .collect(),
    }
}

/// Scenario runs the steps of one scenario on one connection.
struct Scenario<'a> {
    o: &'a Options,
    r: &'a mut Report,
    name: &'a str,
}

impl Scenario<'_> {
    fn step(&self, s: &str) -> String {
        format!("{}.{}", self.name, s)
    }

    fn config(&self) -> Config {
        let mut c = Config {
            bootstrap_servers: self.o.bootstrap.clone(),
            ..Config::default()
        };
        if let (Some(u), Some(p)) = (&self.o.user, &self.o.password) {
            c.security_protocol = "sasl".into();
            c.security_sasl_mechanism = "PLAIN".into();
            c.security_sasl_username = u.clone();
            c.security_sasl_password = p.clone();
        }
        c
    }

    /// connect bootstraps a connection and reports the coordinator the
    /// client took from the metadata; None when it failed.
    async fn connect(&mut self) -> Option<FlussConnection> {
        let step = self.step("connect");
        let details = format!(
            "bootstrap={} sasl={}",
            escape(&self.o.bootstrap),
            self.o
                .user
                .as_deref()
                .map(escape)
                .unwrap_or_else(|| "none".into())
        );
        match bounded(self.o.timeout, FlussConnection::new(self.config())).await {
            Err(why) => self.r.fail(&step, &details, &why),
            Ok(Err(e)) => self.r.fail_error(&step, &details, &e, "want a connection"),
            Ok(Ok(conn)) => {
                let cluster = conn.get_metadata().get_cluster();
                match cluster.get_coordinator_server() {
                    Some(cs) => {
                        let d = format!("{details} coordinator={}@{}", cs.id(), cs.url());
                        self.r.pass(&step, &d);
                        return Some(conn);
                    }
                    None => self
                        .r
                        .fail(&step, &details, "the metadata names no coordinator"),
                }
            }
        }
        None
    }

    /// server_nodes asks for the cluster's nodes (the client bootstraps
    /// again) and requires a coordinator and at least one tablet server.
    async fn server_nodes(&mut self, admin: &FlussAdmin) {
        let step = self.step("server-nodes");
        match bounded(self.o.timeout, admin.get_server_nodes()).await {
            Err(why) => self.r.fail(&step, "", &why),
            Ok(Err(e)) => self.r.fail_error(&step, "", &e, "want the nodes"),
            Ok(Ok(nodes)) => {
                let list: Vec<String> = nodes
                    .iter()
                    .map(|n| format!("{}@{}/{:?}", n.id(), n.url(), n.server_type()))
                    .collect();
                let d = format!("nodes={}", list.join(","));
                let coordinators = nodes
                    .iter()
                    .filter(|n| format!("{:?}", n.server_type()) == "CoordinatorServer")
                    .count();
                let tablets = nodes
                    .iter()
                    .filter(|n| format!("{:?}", n.server_type()) == "TabletServer")
                    .count();
                let why = (coordinators != 1 || tablets == 0).then(|| {
                    format!(
                        "want one coordinator and a tablet server, got {coordinators} and {tablets}"
                    )
                });
                self.r.check(&step, &d, why);
            }
        }
    }

    /// register registers offsets and expects Ok(Some(want)).
    async fn register(
        &mut self,
        admin: &FlussAdmin,
        s: &str,
        id: &str,
        tables: Vec<ProducerTableOffsets>,
        ttl_ms: Option<i64>,
        want: RegisterProducerResult,
    ) {
        let step = self.step(s);
        let details = format!(
            "producer={} ttl_ms={} tables={} offsets={}",
            escape(id),
            ttl_ms
                .map(|t| t.to_string())
                .unwrap_or_else(|| "None".into()),
            tables.len(),
            format_offsets(&tables)
        );
        match bounded(
            self.o.timeout,
            admin.register_producer_offsets(id, tables, ttl_ms),
        )
        .await
        {
            Err(why) => self.r.fail(&step, &details, &why),
            Ok(Err(e)) => self.r.fail_error(&step, &details, &e, "want Ok"),
            Ok(Ok(got)) => {
                let d = format!("{details} {}", describe_register(&got));
                let why = (got != Some(want)).then(|| format!("want Ok(Some({want:?}))"));
                self.r.check(&step, &d, why);
            }
        }
    }

    /// get reads a producer's offsets and compares them with `want`
    /// (None: not found, that is no producer_id) as sets; with
    /// `expires`, the expiration time must lie in that window.
    async fn get(
        &mut self,
        admin: &FlussAdmin,
        s: &str,
        id: &str,
        want: Option<&[ProducerTableOffsets]>,
        expires: Option<(i64, i64)>,
    ) {
        let step = self.step(s);
        let details = format!("producer={}", escape(id));
        match bounded(self.o.timeout, admin.get_producer_offsets(id)).await {
            Err(why) => self.r.fail(&step, &details, &why),
            Ok(Err(e)) => self.r.fail_error(&step, &details, &e, "want Ok"),
            Ok(Ok(got)) => {
                let d = format!("{details} {}", describe_get(&got));
                let why = match want {
                    None if got.producer_id.is_some()
                        || !got.table_offsets.is_empty()
                        || got.expiration_time.is_some() =>
                    {
                        Some(
                            "want not found (no producer_id, no expiration_time, no tables)"
                                .to_string(),
                        )
                    }
                    None => None,
                    Some(_) if got.producer_id.as_deref() != Some(id) => {
                        Some(format!("want producer_id {id:?}"))
                    }
                    Some(w)
                        if entries(&got.table_offsets) != entries(w)
                            || got.table_offsets.len() != w.len() =>
                    {
                        Some(format!(
                            "want offsets {} in {} tables",
                            format_offsets(w),
                            w.len()
                        ))
                    }
                    Some(_) => match (expires, got.expiration_time) {
                        (Some((lo, hi)), Some(e)) if e < lo || e > hi => {
                            Some(format!("want expiration_time in [{lo}, {hi}]"))
                        }
                        (Some(_), None) => Some("want an expiration_time".to_string()),
                        _ => None,
                    },
                };
                self.r.check(&step, &d, why);
            }
        }
    }

    async fn delete(&mut self, admin: &FlussAdmin, s: &str, id: &str) {
        let step = self.step(s);
        let details = format!("producer={}", escape(id));
        match bounded(self.o.timeout, admin.delete_producer_offsets(id)).await {
            Err(why) => self.r.fail(&step, &details, &why),
            Ok(Err(e)) => self.r.fail_error(&step, &details, &e, "want Ok"),
            Ok(Ok(())) => self.r.pass(&step, &format!("{details} outcome=Ok(())")),
        }
    }

    /// expect_error runs a call that must fail with an API error of code;
    /// when prefix is set, the message must start with it.
    async fn expect_error<T: std::fmt::Debug>(
        &mut self,
        s: &str,
        id: &str,
        code: i32,
        prefix: Option<&str>,
        f: impl Future<Output = Result<T, Error>>,
    ) {
        let step = self.step(s);
        let details = format!("producer={}", escape(id));
        match bounded(self.o.timeout, f).await {
            Err(why) => self.r.fail(&step, &details, &why),
            Ok(Ok(v)) => self.r.fail(
                &step,
                &format!("{details} outcome=Ok({v:?})"),
                &format!("want error code {code}"),
            ),
            Ok(Err(e)) => {
                let (fields, message) = describe_error(&e);
                let d = format!("{details} {fields}");
                let why = match &e {
                    Error::FlussAPIError { api_error } if api_error.code != code => {
                        Some(format!("want code {code}"))
                    }
                    Error::FlussAPIError { api_error } => prefix
                        .filter(|p| !api_error.message.starts_with(p))
                        .map(|p| format!("want a message starting {p:?}")),
                    _ => Some(format!("want FlussAPIError with code {code}")),
                };
                match why {
                    None => self
                        .r
                        .pass(&step, &format!("{d} message={}", escape_message(&message))),
                    Some(w) => self.r.fail(&step, &d, &format!("{w}: {message}")),
                }
            }
        }
    }

    /// admin connects and takes the connection's admin client; None when
    /// either failed (reported). The connection is returned with it, to be
    /// kept while the admin client is used.
    async fn admin(&mut self) -> Option<(FlussConnection, Arc<FlussAdmin>)> {
        let conn = self.connect().await?;
        match conn.get_admin() {
            Ok(admin) => Some((conn, admin)),
            Err(e) => {
                self.r
                    .fail_error(&self.step("admin"), "", &e, "want an admin client");
                None
            }
        }
    }

    async fn ping(&mut self) {
        if let Some((_conn, admin)) = self.admin().await {
            self.server_nodes(&admin).await;
        }
    }

    /// health asks GET_CLUSTER_HEALTH once and reports the answer; any
    /// well-formed answer passes (the caller judges the status), an error
    /// fails with what fluss-rs reported.
    async fn health(&mut self) {
        let Some((_conn, admin)) = self.admin().await else {
            return;
        };
        let step = self.step("cluster-health");
        match bounded(self.o.timeout, admin.get_cluster_health()).await {
            Err(why) => self.r.fail(&step, "", &why),
            Ok(Err(e)) => self.r.fail_error(&step, "", &e, "want a ClusterHealth"),
            Ok(Ok(h)) => self.r.pass(&step, &describe_health(&h)),
        }
    }

    async fn offsets(&mut self) {
        let Some((_conn, admin)) = self.admin().await else {
            return;
        };
        let s = self.o.suffix.clone();
        let id = format!("rs-{s}");

        // Two tables, one partitioned (partitions 7 and 8), with a TTL.
        let first = vec![
            table(
                1001,
                &[
                    (None, 0, Some(100)),
                    (None, 1, Some(0)),
                    (None, 2, Some(42)),
                ],
            ),
            table(
                1002,
                &[
                    (Some(7), 0, Some(1000)),
                    (Some(7), 1, Some(1001)),
                    (Some(8), 0, Some(2000)),
                ],
            ),
        ];
        let ttl = 600_000;
        let t0 = now_ms();
        self.register(
            &admin,
            "register",
            &id,
            first.clone(),
            Some(ttl),
            RegisterProducerResult::Created,
        )
        .await;
        let t1 = now_ms();
        self.get(&admin, "get", &id, Some(&first), Some((t0 + ttl, t1 + ttl)))
            .await;

        // The same id again with other offsets: the first snapshot stays.
        let other = vec![table(1001, &[(None, 0, Some(5))])];
        self.register(
            &admin,
            "register-again",
            &id,
            other,
            Some(ttl),
            RegisterProducerResult::AlreadyExists,
        )
        .await;
        self.get(
            &admin,
            "get-after-again",
            &id,
            Some(&first),
            Some((t0 + ttl, t1 + ttl)),
        )
        .await;

        // Many tables, the server's default TTL.
        let many_id = format!("rs-{s}-many");
        let many: Vec<_> = (0..20)
            .map(|i| {
                table(
                    3001 + i,
                    &[
                        (None, 0, Some(i * 10)),
                        (None, 1, Some(i * 10 + 1)),
                        (None, 2, Some(i * 10 + 2)),
                    ],
                )
            })
            .collect();
        let t0 = now_ms();
        self.register(
            &admin,
            "register-many",
            &many_id,
            many.clone(),
            None,
            RegisterProducerResult::Created,
        )
        .await;
        let t1 = now_ms();
        let d = self.o.default_ttl_ms;
        self.get(
            &admin,
            "get-many",
            &many_id,
            Some(&many),
            Some((t0 + d, t1 + d)),
        )
        .await;

        // No tables at all.
        let empty_id = format!("rs-{s}-empty");
        self.register(
            &admin,
            "register-empty",
            &empty_id,
            vec![],
            Some(ttl),
            RegisterProducerResult::Created,
        )
        .await;
        self.get(&admin, "get-empty", &empty_id, Some(&[]), None)
            .await;

        // A snapshot past its expiration is replaced: CREATED again.
        let ttl_id = format!("rs-{s}-ttl");
        let short = vec![table(1001, &[(None, 0, Some(1))])];
        self.register(
            &admin,
            "register-short-ttl",
            &ttl_id,
            short,
            Some(1),
            RegisterProducerResult::Created,
        )
        .await;
        tokio::time::sleep(Duration::from_millis(50)).await;
        let renewed = vec![table(1001, &[(None, 0, Some(2))])];
        self.register(
            &admin,
            "register-over-expired",
            &ttl_id,
            renewed.clone(),
            Some(ttl),
            RegisterProducerResult::Created,
        )
        .await;
        self.get(&admin, "get-over-expired", &ttl_id, Some(&renewed), None)
            .await;

        // A bucket without log_end_offset, which fluss-rs lets a caller send.
        let no_offset_id = format!("rs-{s}-no-offset");
        let no_offset = vec![table(1001, &[(None, 0, None)])];
        let f = admin.register_producer_offsets(&no_offset_id, no_offset, Some(ttl));
        self.expect_error("register-no-offset", &no_offset_id, -1, None, f)
            .await;
        self.get(&admin, "get-no-offset", &no_offset_id, None, None)
            .await;

        // Delete, then every kind of absence.
        self.delete(&admin, "delete", &id).await;
        self.get(&admin, "get-deleted", &id, None, None).await;
        self.delete(&admin, "delete-missing", &id).await;
        self.get(
            &admin,
            "get-missing",
            &format!("rs-{s}-missing"),
            None,
            None,
        )
        .await;
        for (step, pid) in [
            ("delete-many", &many_id),
            ("delete-empty", &empty_id),
            ("delete-ttl", &ttl_id),
        ] {
            self.delete(&admin, step, pid).await;
        }

        // Invalid ids: code 63 from each call.
        let long = "x".repeat(201);
        let invalid: [(&str, &str); 6] = [
            ("slash", "a/b"),
            ("dotdot", ".."),
            ("dot", "."),
            ("empty", ""),
            ("space", "a b"),
            ("long", &long),
        ];
        for (name, bad) in invalid {
            let prefix = format!("Invalid producer ID '{bad}': ");
            let tables = vec![table(1001, &[(None, 0, Some(1))])];
            let f = admin.register_producer_offsets(bad, tables, Some(ttl));
            self.expect_error(
                &format!("register-invalid-{name}"),
                bad,
                63,
                Some(&prefix),
                f,
            )
            .await;
            let f = admin.get_producer_offsets(bad);
            self.expect_error(&format!("get-invalid-{name}"), bad, 63, Some(&prefix), f)
                .await;
            let f = admin.delete_producer_offsets(bad);
            self.expect_error(&format!("delete-invalid-{name}"), bad, 63, Some(&prefix), f)
                .await;
        }
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let o = match parse_args(&args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("fluss-rs-compat: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let mut r = Report { failed: false };
    r.pass(
        "main.options",
        &format!(
            "bootstrap={} sasl={} suffix={} timeout_ms={}",
            escape(&o.bootstrap),
            o.user
                .as_deref()
                .map(escape)
                .unwrap_or_else(|| "none".into()),
            escape(&o.suffix),
            o.timeout.as_millis()
        ),
    );
    for name in &o.scenarios {
        let mut sc = Scenario {
            o: &o,
            r: &mut r,
            name,
        };
        match name.as_str() {
            "ping" => sc.ping().await,
            "health" => sc.health().await,
            _ => sc.offsets().await,
        }
    }
    if r.failed {
        println!("RESULT FAIL");
        ExitCode::from(1)
    } else {
        println!("RESULT PASS");
        ExitCode::SUCCESS
    }
}
