//! A real `redis-server` for the fleet tests: started on a free
//! loopback port in a temp dir, with no persistence, ready once it answers
//! `PING`; killed (and its dir removed) when dropped. It can be killed and
//! started again on the same port, and started with TLS only.
//!
//! Debian's `redis-server` (`.ci/run` installs it), or `$REDIS_SERVER`. Without
//! one the fleet tests are skipped, except under CI, where that is a failure.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// TLS files of a server started with [`RedisServer::start_tls`].
#[derive(Debug, Clone)]
pub(crate) struct TlsFiles {
    /// The CA of the server's certificate (PEM): here the certificate itself.
    pub ca: PathBuf,
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// A running `redis-server`.
pub(crate) struct RedisServer {
    binary: PathBuf,
    child: Option<Child>,
    port: u16,
    /// Data and TLS files.
    dir: tempfile::TempDir,
    tls: Option<TlsFiles>,
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The redis-server to run, or `None` (the caller skips) outside CI.
fn binary() -> Option<PathBuf> {
    let path = std::env::var_os("REDIS_SERVER")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/redis-server"));
    if path.exists() {
        return Some(path);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "redis-server not found at {}: .ci/run installs Debian's",
        path.display()
    );
    eprintln!(
        "skipped: no redis-server at {} (set REDIS_SERVER)",
        path.display()
    );
    None
}

impl RedisServer {
    /// A plain server, or `None` when there is no redis-server to run here.
    pub(crate) fn start() -> Option<RedisServer> {
        RedisServer::launch(None)
    }

    /// A server that speaks TLS only, with a certificate for 127.0.0.1 signed
    /// by a fresh CA (rcgen).
    pub(crate) fn start_tls() -> Option<RedisServer> {
        RedisServer::launch(Some(()))
    }

    fn launch(tls: Option<()>) -> Option<RedisServer> {
        let binary = binary()?;
        let dir = tempfile::tempdir().unwrap();
        let tls = tls.map(|()| write_tls_files(dir.path()));
        let mut server = RedisServer {
            binary,
            child: None,
            port: 0,
            dir,
            tls,
        };
        for _ in 0..5 {
            server.port = free_port();
            if server.spawn() {
                return Some(server);
            }
        }
        panic!("redis-server did not start on any of 5 ports");
    }

    /// Starts the process on `self.port`; `true` once it answers PING.
    fn spawn(&mut self) -> bool {
        let mut command = Command::new(&self.binary);
        command
            .args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(self.dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        match &self.tls {
            None => {
                command.args(["--port", &self.port.to_string()]);
            }
            Some(tls) => {
                command
                    .args(["--port", "0", "--tls-port", &self.port.to_string()])
                    .arg("--tls-cert-file")
                    .arg(&tls.cert)
                    .arg("--tls-key-file")
                    .arg(&tls.key)
                    .arg("--tls-ca-cert-file")
                    .arg(&tls.ca)
                    .args(["--tls-auth-clients", "no"]);
            }
        }
        let mut child = command.spawn().expect("spawn redis-server");
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if self.ping() {
                self.child = Some(child);
                return true;
            }
            if let Ok(Some(_)) = child.try_wait() {
                return false; // e.g. the port was taken meanwhile
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn ping(&self) -> bool {
        let Ok(mut conn) = self
            .client()
            .get_connection_with_timeout(Duration::from_secs(1))
        else {
            return false;
        };
        redis::cmd("PING").query::<String>(&mut conn).is_ok()
    }

    /// The URL of the server (`rediss://` for TLS).
    pub(crate) fn url(&self) -> String {
        match self.tls {
            None => format!("redis://127.0.0.1:{}/", self.port),
            Some(_) => format!("rediss://127.0.0.1:{}/", self.port),
        }
    }

    /// The fleet key file every instance on this server shares ([`write_key_file`]
    /// in the server's dir).
    pub(crate) fn key_file(&self) -> PathBuf {
        let path = self.dir.path().join(KEY_FILE);
        if !path.exists() {
            write_key_file(self.dir.path());
        }
        path
    }

    /// The TLS files, for a server started with TLS.
    pub(crate) fn tls(&self) -> Option<&TlsFiles> {
        self.tls.as_ref()
    }

    /// A client for the test's own looks at the data.
    pub(crate) fn client(&self) -> redis::Client {
        match &self.tls {
            None => redis::Client::open(self.url()).unwrap(),
            Some(tls) => redis::Client::build_with_tls(
                self.url(),
                redis::TlsCertificates {
                    client_tls: None,
                    root_cert: Some(std::fs::read(&tls.ca).unwrap()),
                },
            )
            .unwrap(),
        }
    }

    /// A connection for the test's own looks at the data.
    pub(crate) fn conn(&self) -> redis::Connection {
        self.client()
            .get_connection_with_timeout(Duration::from_secs(5))
            .unwrap()
    }

    /// Kills the server (SIGKILL: no goodbye to its clients).
    pub(crate) fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts it again on the same port, empty.
    pub(crate) fn restart(&mut self) {
        self.kill();
        assert!(
            self.spawn(),
            "redis-server did not restart on port {}",
            self.port
        );
    }
}

/// The name of the fleet key file in a test's dir.
const KEY_FILE: &str = "fleet.key";

/// The key in every test's fleet key file: the tests compute tags with it.
pub(crate) const FLEET_KEY: &str = "test-fleet-key-0123456789abcdef0123456789abcdef";

/// Writes a fleet key file (`key_file`) holding [`FLEET_KEY`] into `dir`,
/// mode 0600 as the secret-file checks want it; returns its path.
pub(crate) fn write_key_file(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(KEY_FILE);
    std::fs::write(&path, format!("{FLEET_KEY}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    path
}

/// `payload` as the fleet stores it at `redis_key` under [`FLEET_KEY`]: the
/// documented format, computed here apart from the crate's own code, so a test
/// can plant a value only the fleet (or a holder of its key) could write.
pub(crate) fn seal(redis_key: &str, payload: &[u8]) -> Vec<u8> {
    use hmac::{Hmac, Mac};
    let mut mac = <Hmac<sha2::Sha256> as Mac>::new_from_slice(FLEET_KEY.as_bytes()).unwrap();
    mac.update(b"webfetch fleet v1\0");
    mac.update(&(redis_key.len() as u64).to_be_bytes());
    mac.update(redis_key.as_bytes());
    mac.update(payload);
    let mut stored = b"WFT1".to_vec();
    stored.extend_from_slice(&mac.finalize().into_bytes());
    stored.extend_from_slice(payload);
    stored
}

/// The payload of a value the fleet stored (its tag stripped, not checked).
pub(crate) fn unsealed(stored: &[u8]) -> &[u8] {
    assert!(stored.starts_with(b"WFT1"), "a sealed value");
    &stored[4 + 32..]
}

/// A port that was free a moment ago (redis needs an explicit one).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A self-signed certificate for 127.0.0.1 (its own CA) and its key, as
/// private PEM files in `dir`.
fn write_tls_files(dir: &Path) -> TlsFiles {
    use std::os::unix::fs::PermissionsExt;
    let rcgen::CertifiedKey { cert, signing_key } =
        rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap();
    let files = TlsFiles {
        ca: dir.join("cert.pem"),
        cert: dir.join("cert.pem"),
        key: dir.join("key.pem"),
    };
    for (path, text) in [
        (&files.cert, cert.pem()),
        (&files.key, signing_key.serialize_pem()),
    ] {
        std::fs::write(path, text).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    files
}
