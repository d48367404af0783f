//! A fleet: two or more real `webfetch serve` processes on one real
//! `redis-server` (started by the test on a free loopback port, stopped after),
//! against loopback origins that count the requests they get: shared hits,
//! single flight, robots.txt fetched once, politeness after a 429 and under
//! `per_origin_in_flight`, Redis killed and restarted mid-run, a stalled Redis,
//! TLS with a private CA, and a credentials file others could write.
//!
//! No test sleeps to synchronise: an origin that holds a response waits for the
//! test to open its gate, and the test opens it once what it waits for has
//! happened, woken by it (a request counted, a call logged). Each such wait
//! races the calls under test, so a call that ends first fails the test with
//! its answer. The one poll is for an instance to find a
//! restarted Redis again, bounded by a minute.

use std::net::SocketAddr;
use std::time::Duration;

use serde_json::{Value, json};
use wiremock::{MockServer, ResponseTemplate};

use crate::serve::{Served, get, target};
use crate::support::origin::Origin;
use crate::support::race::until;
use crate::support::redis_server::{RedisServer, seal, unsealed, write_key_file};
use crate::support::{Config, hits, html, robots, serve, toml_string};

const PAGE: &str = "<html><head><title>Fleet</title></head><body><main><h1>Fleet</h1>\
<p>A page shared by every instance of the fleet.</p></main></body></html>";

/// `[tools.webfetch.fleet]` on `redis` with the test key, plus `extra` lines.
pub(crate) fn fleet(config: Config, redis: &RedisServer, extra: &str) -> Config {
    config.section(&format!(
        "[tools.webfetch.fleet]\nredis_url = {}\nkey_file = {}\n{extra}",
        toml_string(&redis.url()),
        toml_string(&redis.key_file().display().to_string())
    ))
}

async fn fetch(served: &Served, url: &str) -> Value {
    let reply = get(served.addr, &target(url)).await;
    let json = reply.json();
    assert!(
        reply.status == 200 || json.get("code").is_some(),
        "{}: {}",
        reply.status,
        reply.body
    );
    json
}

/// Shared documents: what one instance fetched, another serves from Redis, with the same
/// response as a disk hit gives; the entry is the disk cache's JSON under the
/// disk cache's key, expiring at its `expires_at`. Without `share_robots` each
/// instance fetches robots.txt itself (FR-WF-ROBOTS-CACHE-01).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fleet_instances_share_cached_pages_and_a_hit_is_a_disk_hit() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let server = MockServer::start().await;
    serve(&server, "/page", html(PAGE)).await;
    serve(&server, "/other", html(PAGE)).await;
    robots(&server, "User-agent: *\nAllow: /\n").await;
    let port = server.address().port();
    let config = fleet(Config::new(&[port]), &redis, "");
    let (a, b) = (
        Served::start(&config, &[], &[]),
        Served::start(&config, &[], &[]),
    );
    let url = format!("http://127.0.0.1:{port}/page");

    let fresh = fetch(&a, &url).await;
    assert_eq!(fresh["notes"], json!([]));
    let shared = fetch(&b, &url).await;
    assert_eq!(shared["notes"], json!(["cache_hit"]));
    assert_eq!(shared["fetched_at"], fresh["fetched_at"]);
    assert_eq!(hits(&server, "/page").await, 1);

    // The same call answered by a disk hit.
    let dir = tempfile::tempdir().unwrap();
    let disk = Served::start(&Config::new(&[port]).cache(dir.path()), &[], &[]);
    fetch(&disk, &url).await;
    let mut disk_hit = fetch(&disk, &url).await;
    assert_eq!(disk_hit["notes"], json!(["cache_hit"]));
    let mut shared_hit = shared.clone();
    disk_hit["fetched_at"] = Value::Null;
    shared_hit["fetched_at"] = Value::Null;
    assert_eq!(shared_hit, disk_hit);

    // The entry: the disk file's JSON (stamps aside) at the disk cache's key.
    let files = crate::support::json_files(dir.path());
    assert_eq!(files.len(), 1);
    let key = files[0].file_stem().unwrap().to_str().unwrap().to_owned();
    let mut conn = redis.conn();
    let stored: Vec<u8> = redis::cmd("GET")
        .arg(format!("webfetch:doc:{key}"))
        .query(&mut conn)
        .unwrap();
    assert_eq!(
        stored,
        seal(&format!("webfetch:doc:{key}"), unsealed(&stored)),
        "sealed with the fleet's tag for its key"
    );
    let on_disk = std::fs::read(&files[0]).unwrap();
    let (mut stored, mut on_disk): (Value, Value) = (
        serde_json::from_slice(unsealed(&stored)).unwrap(),
        serde_json::from_slice(&on_disk).unwrap(),
    );
    let expires_at = stored["expires_at"].as_str().unwrap().to_owned();
    for entry in [&mut stored, &mut on_disk] {
        for stamp in ["fetched_at", "expires_at", "last_accessed_at"] {
            entry[stamp] = Value::Null;
        }
    }
    assert_eq!(stored, on_disk);
    let expire_time: i64 = redis::cmd("EXPIRETIME")
        .arg(format!("webfetch:doc:{key}"))
        .query(&mut conn)
        .unwrap();
    let expires_at =
        time::OffsetDateTime::parse(&expires_at, &time::format_description::well_known::Rfc3339)
            .unwrap();
    assert_eq!(expire_time, expires_at.unix_timestamp() + 1);

    // No robots.txt sharing by default: each instance asks for its own.
    fetch(&b, &format!("http://127.0.0.1:{port}/other")).await;
    assert_eq!(
        hits(&server, "/robots.txt").await,
        3,
        "a, b and the disk instance"
    );
}

/// Extension formats on the fleet: the shared store keys a document by the formats its
/// call enabled, as the disk cache does. An instance reading publisher Markdown
/// (serve's default formats) and one with `formats = []` (the SRD's HTML) share
/// one Redis: neither is answered with the other's representation, and each
/// hits its own entry afterwards.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fleet_keeps_publisher_markdown_and_html_apart() {
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, Request};

    let Some(redis) = RedisServer::start() else {
        return;
    };
    let server = MockServer::start().await;
    robots(&server, "User-agent: *\nAllow: /\n").await;
    let srd_accept = |request: &Request| {
        request
            .headers
            .get("accept")
            .is_some_and(|v| v == "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.1")
    };
    Mock::given(method("GET"))
        .and(path("/doc"))
        .and(srd_accept)
        .respond_with(ResponseTemplate::new(200).set_body_raw(
            b"<title>T</title><p>From HTML.</p>".to_vec(),
            "text/html; charset=utf-8",
        ))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/doc"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_raw(b"From Markdown.\n".to_vec(), "text/markdown; charset=utf-8"),
        )
        .mount(&server)
        .await;
    let port = server.address().port();
    let agent = fleet(Config::new(&[port]), &redis, "");
    let srd =
        fleet(Config::new(&[port]), &redis, "").section("[tools.webfetch.content]\nformats = []");
    let (a, b) = (
        Served::start(&agent, &[], &[]),
        Served::start(&srd, &[], &[]),
    );
    let url = format!("http://127.0.0.1:{port}/doc");
    let text = |response: &Value| response["chunks"][0]["text"].as_str().map(str::to_owned);

    let markdown = fetch(&a, &url).await;
    assert_eq!(text(&markdown).as_deref(), Some("From Markdown."));
    assert_eq!(markdown["notes"], json!(["publisher_markdown"]));
    let html = fetch(&b, &url).await;
    assert_eq!(text(&html).as_deref(), Some("From HTML."));
    assert_eq!(html["notes"], json!([]));
    assert_eq!(hits(&server, "/doc").await, 2);

    let (markdown_hit, html_hit) = (fetch(&a, &url).await, fetch(&b, &url).await);
    assert_eq!(text(&markdown_hit).as_deref(), Some("From Markdown."));
    assert_eq!(markdown_hit["notes"], json!(["cache_hit"]));
    assert_eq!(text(&html_hit).as_deref(), Some("From HTML."));
    assert_eq!(html_hit["notes"], json!(["cache_hit"]));
    assert_eq!(hits(&server, "/doc").await, 2);
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg("webfetch:doc:*")
        .query(&mut redis.conn())
        .unwrap();
    assert_eq!(keys.len(), 2, "{keys:?}");
}

/// Single flight: six calls at once for one uncached page through two instances: the
/// origin is asked once. It holds that request until all six calls have
/// started, so the others find the page being fetched and wait for it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fleet_single_flight_fetches_a_page_once_for_the_whole_fleet() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let origin = Origin::start(PAGE);
    let config = fleet(Config::new(&[origin.port()]).timeout(30), &redis, "");
    let (a, b) = (
        Served::start(&config, &[], &[]),
        Served::start(&config, &[], &[]),
    );
    let url = origin.url("/held/page");
    let mut calls: Vec<_> = (0..6)
        .map(|i| {
            let addr: SocketAddr = if i % 2 == 0 { a.addr } else { b.addr };
            let target = target(&url);
            tokio::spawn(async move { get(addr, &target).await })
        })
        .collect();
    // The page is held, and three calls went through each instance.
    let started = async {
        origin.wait_for("/held/page", 1).await;
        a.logs_with("fetch_start", 3).await;
        b.logs_with("fetch_start", 3).await;
    };
    until(started, calls.iter_mut()).await;
    origin.open();
    let mut notes = Vec::new();
    for call in calls {
        let reply = call.await.unwrap();
        assert_eq!(reply.status, 200, "{}", reply.body);
        notes.push(reply.json()["notes"].clone());
    }
    assert_eq!(origin.count("/held/page"), 1, "one fetch for the fleet");
    let fetched = notes.iter().filter(|n| **n == json!([])).count();
    let hit = notes.iter().filter(|n| **n == json!(["cache_hit"])).count();
    assert_eq!((fetched, hit), (1, 5), "{notes:?}");
}

/// Single flight: the holder dies mid-fetch (SIGKILL): its lease runs out, one
/// waiter takes over and fetches, the other waiter reads that result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fleet_a_dead_holders_lease_lapses_and_one_waiter_takes_over() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let origin = Origin::start(PAGE);
    let config = fleet(Config::new(&[origin.port()]).timeout(8), &redis, "");
    let (mut a, b) = (
        Served::start(&config, &[], &[]),
        Served::start(&config, &[], &[]),
    );
    let url = origin.url("/held/page");
    // a's call: its connection dies with a. The read ends with whatever a
    // answers, which before the kill fails the test.
    let mut held = {
        let head = format!(
            "GET {} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
            target(&url),
            a.addr
        );
        let mut stream = tokio::net::TcpStream::connect(a.addr).await.unwrap();
        tokio::spawn(async move {
            use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
            stream.write_all(head.as_bytes()).await.unwrap();
            let mut answered = Vec::new();
            let _ = stream.read_to_end(&mut answered).await;
            String::from_utf8_lossy(&answered).into_owned()
        })
    };
    until(origin.wait_for("/held/page", 1), [&mut held]).await;
    let mut waiters: Vec<_> = (0..2)
        .map(|_| {
            let (addr, target) = (b.addr, target(&url));
            tokio::spawn(async move { get(addr, &target).await })
        })
        .collect();
    until(b.logs_with("fetch_start", 2), waiters.iter_mut()).await;
    a.child.kill().unwrap();
    a.child.wait().unwrap();
    origin.open();
    let mut notes = Vec::new();
    for waiter in waiters {
        let reply = waiter.await.unwrap();
        assert_eq!(reply.status, 200, "{}", reply.body);
        notes.push(reply.json()["notes"].clone());
    }
    notes.sort_by_key(|n| n.to_string());
    assert_eq!(notes, [json!(["cache_hit"]), json!([])], "{}", b.logs());
    assert_eq!(origin.count("/held/page"), 2, "a's, then one waiter's");
    held.abort();
}

/// Shared robots.txt: with `share_robots`, robots.txt is fetched once for the fleet, and
/// its rules hold on every instance.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fleet_share_robots_fetches_robots_txt_once() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let server = MockServer::start().await;
    robots(&server, "User-agent: *\nDisallow: /private\n").await;
    for path in ["/a", "/b", "/c", "/private"] {
        serve(&server, path, html(PAGE)).await;
    }
    let port = server.address().port();
    let config = fleet(Config::new(&[port]), &redis, "share_robots = true");
    let instances: Vec<Served> = (0..3).map(|_| Served::start(&config, &[], &[])).collect();
    for (served, path) in instances.iter().zip(["/a", "/b", "/c"]) {
        let response = fetch(served, &format!("http://127.0.0.1:{port}{path}")).await;
        assert_eq!(response["title"], "Fleet", "{response}");
    }
    let refused = fetch(&instances[2], &format!("http://127.0.0.1:{port}/private")).await;
    assert_eq!(refused["code"], "robots_disallowed");
    assert_eq!(hits(&server, "/robots.txt").await, 1);
    assert_eq!(hits(&server, "/private").await, 0);
}

/// Fleet-wide politeness: a 429 with `Retry-After` holds the origin for every instance: a
/// call through another instance, to another page of that origin, gets
/// `http_4xx` 429 (retryable, `retry_after_seconds`) without the origin, or
/// its robots.txt, being asked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fleet_a_429_holds_the_origin_for_every_instance() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let server = MockServer::start().await;
    robots(&server, "User-agent: *\nAllow: /\n").await;
    serve(
        &server,
        "/busy",
        ResponseTemplate::new(429).insert_header("Retry-After", "30"),
    )
    .await;
    serve(&server, "/other", html(PAGE)).await;
    let port = server.address().port();
    let config = fleet(Config::new(&[port]), &redis, "");
    let (a, mut b) = (
        Served::start(&config, &[], &[]),
        Served::start(&config, &[], &[]),
    );

    let origin_said = fetch(&a, &format!("http://127.0.0.1:{port}/busy")).await;
    assert_eq!(origin_said["code"], "http_4xx");
    assert_eq!(
        origin_said["details"],
        json!({"status": 429, "status_text": "Too Many Requests"})
    );
    let held = fetch(&b, &format!("http://127.0.0.1:{port}/other")).await;
    assert_eq!(held["code"], "http_4xx", "{held}");
    assert_eq!(held["retryable"], true);
    assert_eq!(held["details"]["status"], 429);
    assert_eq!(held["details"]["reason"], "origin_held");
    let retry_after = held["details"]["retry_after_seconds"].as_u64().unwrap();
    assert!((1..=30).contains(&retry_after), "{retry_after}");
    assert_eq!(hits(&server, "/other").await, 0);
    assert_eq!(hits(&server, "/robots.txt").await, 1, "a's only");
    let logs = b.stop().await;
    assert!(logs.contains("politeness_refused"), "{logs}");
}

/// Fleet-wide politeness: `per_origin_in_flight = 1` is fleet-wide: while one instance's
/// request is in flight, a call through another instance waits for the slot
/// within its budget, then gets `http_4xx` 429 `origin_busy`, and its request
/// never reaches the origin.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fleet_per_origin_in_flight_is_fleet_wide() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let origin = Origin::start(PAGE);
    let limit = "per_origin_in_flight = 1";
    let a = Served::start(
        &fleet(Config::new(&[origin.port()]).timeout(60), &redis, limit),
        &[],
        &[],
    );
    let b = Served::start(
        &fleet(Config::new(&[origin.port()]).timeout(2), &redis, limit),
        &[],
        &[],
    );
    let mut first = {
        let (addr, target) = (a.addr, target(&origin.url("/held/first")));
        tokio::spawn(async move { get(addr, &target).await })
    };
    until(origin.wait_for("/held/first", 1), [&mut first]).await;
    let second = fetch(&b, &origin.url("/second")).await;
    assert_eq!(second["code"], "http_4xx", "{second}");
    assert_eq!(second["details"]["reason"], "origin_busy");
    assert_eq!(second["details"]["retry_after_seconds"], 1);
    assert_eq!(origin.count("/second"), 0);
    origin.open();
    let first = first.await.unwrap();
    assert_eq!(first.status, 200, "{}", first.body);
    // The slot came back: the next call goes through.
    let third = fetch(&b, &origin.url("/second")).await;
    assert_eq!(third["title"], "Fleet", "{third}");
}

/// Redis failures: Redis killed mid-run: calls still answer, as with no shared cache,
/// and say so in the log; started again (empty), the instances reconnect by
/// themselves and sharing resumes, without restarting them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fleet_redis_killed_mid_run_then_restarted() {
    let Some(mut redis) = RedisServer::start() else {
        return;
    };
    let server = MockServer::start().await;
    for path in ["/one", "/two", "/three"] {
        serve(&server, path, html(PAGE)).await;
    }
    let port = server.address().port();
    let config = fleet(Config::new(&[port]), &redis, "");
    let (mut a, mut b) = (
        Served::start(&config, &[], &[]),
        Served::start(&config, &[], &[]),
    );
    let one = format!("http://127.0.0.1:{port}/one");
    fetch(&a, &one).await;
    assert_eq!(fetch(&b, &one).await["notes"], json!(["cache_hit"]));

    redis.kill();
    let two = format!("http://127.0.0.1:{port}/two");
    for served in [&a, &b] {
        let response = fetch(served, &two).await;
        assert_eq!(response["notes"], json!([]), "{response}");
        assert_eq!(response["title"], "Fleet");
    }
    assert_eq!(
        hits(&server, "/two").await,
        2,
        "nothing shared while Redis is down"
    );
    // Logged by the calls above, which have returned: the lines are in the
    // pipes already, on their way to the reader threads.
    for served in [&a, &b] {
        served.logs_with("fleet_redis_unavailable", 1).await;
    }

    redis.restart();
    // Each instance tries Redis again after a pause of at most 2 s.
    let three = format!("http://127.0.0.1:{port}/three");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        fetch(&a, &three).await;
        if fetch(&b, &three).await["notes"] == json!(["cache_hit"]) {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "sharing did not resume"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (a_logs, b_logs) = (a.stop().await, b.stop().await);
    assert!(
        a_logs.contains("fleet_redis_back") || b_logs.contains("fleet_redis_back"),
        "{a_logs}\n{b_logs}"
    );
}

/// Redis failures: Redis flushed mid-run costs a refetch, nothing else; a full Redis
/// (`noeviction` at its `maxmemory`) refuses writes: calls still answer, with
/// no `cache_write_failed` (as with no shared cache), and a warning says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fleet_a_flushed_or_full_redis_costs_only_refetches() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let server = MockServer::start().await;
    serve(&server, "/page", html(PAGE)).await;
    let port = server.address().port();
    let mut served = Served::start(&fleet(Config::new(&[port]), &redis, ""), &[], &[]);
    let url = format!("http://127.0.0.1:{port}/page");
    fetch(&served, &url).await;
    assert_eq!(fetch(&served, &url).await["notes"], json!(["cache_hit"]));

    let mut conn = redis.conn();
    redis::cmd("FLUSHALL").exec(&mut conn).unwrap();
    assert_eq!(fetch(&served, &url).await["notes"], json!([]));
    assert_eq!(fetch(&served, &url).await["notes"], json!(["cache_hit"]));
    assert_eq!(hits(&server, "/page").await, 2);

    redis::cmd("FLUSHALL").exec(&mut conn).unwrap();
    redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory-policy")
        .arg("noeviction")
        .exec(&mut conn)
        .unwrap();
    redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory")
        .arg("1")
        .exec(&mut conn)
        .unwrap();
    for _ in 0..2 {
        let response = fetch(&served, &url).await;
        assert_eq!(response["notes"], json!([]), "{response}");
    }
    assert_eq!(hits(&server, "/page").await, 4);
    let logs = served.stop().await;
    assert!(logs.contains("fleet_redis_refused"), "{logs}");
}

/// Redis failures: a Redis that accepts connections and never answers costs a call at
/// most one operation timeout: the call answers within its own budget, as
/// with no shared cache, and the log names the Redis without its password.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fleet_a_stalled_redis_never_holds_a_call_past_its_budget() {
    let stalled = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let redis_port = stalled.local_addr().unwrap().port();
    let accepted = std::thread::spawn(move || {
        // Accept and hold every connection, answering nothing.
        let mut held = Vec::new();
        for stream in stalled.incoming().take(4).map_while(Result::ok) {
            held.push(stream);
        }
        held
    });
    let server = MockServer::start().await;
    serve(&server, "/page", html(PAGE)).await;
    let port = server.address().port();
    let dir = tempfile::tempdir().unwrap();
    let key_file = write_key_file(dir.path());
    let config = Config::new(&[port]).timeout(5).section(&format!(
        "[tools.webfetch.fleet]\nredis_url = \"redis://:hunter2@127.0.0.1:{redis_port}/\"\n\
         share_robots = true\nkey_file = {}",
        toml_string(&key_file.display().to_string())
    ));
    let mut served = Served::start(&config, &[], &[]);
    let url = format!("http://127.0.0.1:{port}/page");
    for _ in 0..2 {
        let response = tokio::time::timeout(Duration::from_secs(5), fetch(&served, &url))
            .await
            .expect("the call answered within its budget");
        assert_eq!(response["title"], "Fleet", "{response}");
        assert_eq!(response["notes"], json!([]));
    }
    let logs = served.stop().await;
    assert!(logs.contains("fleet_redis_unavailable"), "{logs}");
    assert!(!logs.contains("hunter2"), "{logs}");
    drop(accepted);
}

/// Redis failures: `rediss://` to a server whose certificate a private CA signed
/// (`tls_ca_file`), the URL with its password read from `redis_url_file`: two
/// instances share a page over TLS, and no log line shows the password.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fleet_rediss_with_a_private_ca() {
    use std::os::unix::fs::PermissionsExt;
    let Some(redis) = RedisServer::start_tls() else {
        return;
    };
    let ca = redis.tls().unwrap().ca.clone();
    let mut conn = redis.conn();
    redis::cmd("CONFIG")
        .arg("SET")
        .arg("requirepass")
        .arg("s3cret-pw")
        .exec(&mut conn)
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let url_file = dir.path().join("redis-url");
    let url = redis.url().replacen("rediss://", "rediss://:s3cret-pw@", 1);
    std::fs::write(&url_file, format!("{url}\n")).unwrap();
    std::fs::set_permissions(&url_file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let server = MockServer::start().await;
    serve(&server, "/page", html(PAGE)).await;
    let port = server.address().port();
    let config = Config::new(&[port]).section(&format!(
        "[tools.webfetch.fleet]\nredis_url_file = {}\ntls_ca_file = {}\nkey_file = {}",
        toml_string(&url_file.display().to_string()),
        toml_string(&ca.display().to_string()),
        toml_string(&redis.key_file().display().to_string())
    ));
    let (mut a, mut b) = (
        Served::start(&config, &[], &[]),
        Served::start(&config, &[], &[]),
    );
    let page = format!("http://127.0.0.1:{port}/page");
    fetch(&a, &page).await;
    let shared = fetch(&b, &page).await;
    assert_eq!(shared["notes"], json!(["cache_hit"]), "{}", b.logs());
    assert_eq!(hits(&server, "/page").await, 1);
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg("webfetch:doc:*")
        .query(&mut conn)
        .unwrap();
    assert_eq!(keys.len(), 1);
    for served in [&mut a, &mut b] {
        let logs = served.stop().await;
        assert!(!logs.contains("s3cret-pw"), "{logs}");
    }
}

/// The credentials file is trusted only if nobody else can write it: `serve`
/// refuses to start (exit 1) and says why, never what is in it.
#[test]
fn fleet_refuses_a_redis_url_file_others_can_write() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("redis-url");
    std::fs::write(&secret, "redis://:hunter2@127.0.0.1:6379/\n").unwrap();
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o666)).unwrap();
    let config = Config::new(&[80]).section(&format!(
        "[tools.webfetch.fleet]\nredis_url_file = {}",
        toml_string(&secret.display().to_string())
    ));
    let file = dir.path().join("config.toml");
    std::fs::write(&file, config.toml()).unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_webfetch"))
        .args(["serve", "--listen", "127.0.0.1:0", "--config"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("writable by group or others"), "{stderr}");
    assert!(!stderr.contains("hunter2"), "{stderr}");
}
