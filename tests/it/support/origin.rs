//! A raw loopback origin that counts the requests it gets per path and holds
//! some until the test opens it: `/robots.txt` is a 404; a path under `/held`
//! waits until [`Origin::open`] (or the origin is dropped); anything else is the
//! page at once. The tests of `webfetch serve` and of the fleet use it to keep a
//! call in flight for exactly as long as they need, without any timing.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write as _};
use std::sync::{Arc, Condvar, Mutex};

use tokio::sync::watch;

use super::deadline::{WAIT, within};

/// The running origin; its listener thread lives as long as the test binary.
pub(crate) struct Origin {
    port: u16,
    /// Requests per path, published on each one counted.
    counts: watch::Sender<HashMap<String, usize>>,
    gate: Arc<(Mutex<bool>, Condvar)>,
}

impl Origin {
    /// An origin on a free loopback port whose page is `page` (HTML).
    pub(crate) fn start(page: &'static str) -> Origin {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let counts = watch::Sender::new(HashMap::new());
        let gate: Arc<(Mutex<bool>, Condvar)> = Arc::default();
        let (seen, shut) = (counts.clone(), Arc::clone(&gate));
        std::thread::spawn(move || {
            for stream in listener.incoming().map_while(Result::ok) {
                let (seen, shut) = (seen.clone(), Arc::clone(&shut));
                std::thread::spawn(move || answer(stream, page, &seen, &shut));
            }
        });
        Origin { port, counts, gate }
    }

    /// The origin's port.
    pub(crate) fn port(&self) -> u16 {
        self.port
    }

    /// `path` on the origin, by IP address.
    pub(crate) fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// Requests for `path` so far.
    pub(crate) fn count(&self, path: &str) -> usize {
        self.counts.borrow().get(path).copied().unwrap_or(0)
    }

    /// Resolves once `path` was asked for `n` times (woken by each request).
    /// Race it with the calls under test ([`super::deadline::until`]), which
    /// ends it when they end first; it fails the test if nothing has ended it
    /// within [`WAIT`].
    pub(crate) async fn wait_for(&self, path: &str, n: usize) {
        let mut counts = self.counts.subscribe();
        let asked = counts.wait_for(|c| c.get(path).copied().unwrap_or(0) >= n);
        // The sender lives in `self`, so the channel stays open.
        let _ = within(WAIT, &format!("{n} requests for {path}"), asked).await;
    }

    /// Answers every held request, now and from now on.
    pub(crate) fn open(&self) {
        let (open, changed) = &*self.gate;
        *open.lock().unwrap() = true;
        changed.notify_all();
    }
}

impl Drop for Origin {
    fn drop(&mut self) {
        self.open();
    }
}

/// Reads one request, counts it, holds it while the gate is shut if its path
/// is under `/held`, and answers.
fn answer(
    mut stream: std::net::TcpStream,
    page: &str,
    counts: &watch::Sender<HashMap<String, usize>>,
    gate: &(Mutex<bool>, Condvar),
) {
    let Some(path) = request_path(&stream) else {
        return;
    };
    counts.send_modify(|c| *c.entry(path.clone()).or_default() += 1);
    let reply = if path == "/robots.txt" {
        "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_owned()
    } else {
        if path.starts_with("/held") {
            let (open, changed) = gate;
            let mut open = open.lock().unwrap();
            while !*open {
                open = changed.wait(open).unwrap();
            }
        }
        format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{page}",
            page.len()
        )
    };
    let _ = stream.write_all(reply.as_bytes());
}

/// Reads one request's head from `stream`: the path it asks for, or `None` when
/// the connection ends first.
pub(crate) fn request_path(stream: &std::net::TcpStream) -> Option<String> {
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let path = line.split(' ').nth(1).unwrap_or("").to_owned();
    loop {
        let mut header = String::new();
        match reader.read_line(&mut header) {
            Ok(0) | Err(_) => return None,
            Ok(_) if header == "\r\n" => return Some(path),
            Ok(_) => {}
        }
    }
}
