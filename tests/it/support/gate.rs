//! A loopback server that keeps a page's network busy until the page says it is
//! done: `GET /hold?t=TOKEN` is answered only once `GET /release?t=TOKEN` has come,
//! in either order (or when the gate is dropped). Each page load draws its own
//! token, so one gate serves any number of renders. A page that fetches `/hold` first and `/release` after its last DOM
//! change cannot reach network idle (500 ms without requests, FR-WF-11) in the gaps
//! between its scripts, however slowly a loaded machine runs them; so the rendered
//! DOM always holds every change the page made, without any timing assumption.

use std::collections::HashSet;

use tokio::io::AsyncWriteExt as _;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::read_head;

/// The running gate; dropping it stops the server and answers nothing more.
pub(crate) struct Gate {
    port: u16,
    server: JoinHandle<()>,
}

impl Gate {
    /// Starts a gate on a free loopback port.
    pub(crate) async fn start() -> Gate {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let (release, released) = watch::channel(HashSet::<String>::new());
        let server = tokio::spawn(async move {
            // Connections end with the server: dropping the set aborts them.
            let mut connections = tokio::task::JoinSet::new();
            while let Ok((mut socket, _)) = listener.accept().await {
                let release = release.clone();
                let mut released = released.clone();
                connections.spawn(async move {
                    let head = read_head(&mut socket).await;
                    let target = head.split(' ').nth(1).unwrap_or_default();
                    if let Some(token) = target.strip_prefix("/release?t=") {
                        release.send_modify(|tokens| {
                            tokens.insert(token.to_owned());
                        });
                    } else if let Some(token) = target.strip_prefix("/hold?t=") {
                        // Ends with the release, or with the gate.
                        let _ = released.wait_for(|tokens| tokens.contains(token)).await;
                    }
                    let _ = socket
                        .write_all(
                            b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\
                              Access-Control-Allow-Origin: *\r\nContent-Length: 2\r\n\
                              Connection: close\r\n\r\nok",
                        )
                        .await;
                });
            }
        });
        Gate { port, server }
    }

    /// The gate's port, to allow in the test's config.
    pub(crate) fn port(&self) -> u16 {
        self.port
    }

    /// A script for the page's `<head>`: defines `gate_release()`, to call after
    /// the page's last change, and holds the network from now until then. The
    /// gate is on the page's own host name, at its own port. A release that
    /// `fetch()` cannot send (the page spent its subresource budget) goes as an
    /// iframe's document instead, which the budget does not cover
    /// (BROWSER-BUDGET-02).
    pub(crate) fn script(&self) -> String {
        format!(
            "const GATE = location.protocol + '//' + location.hostname + ':{port}';\n\
             const GATE_TOKEN = String(Math.random()).slice(2);\n\
             fetch(GATE + '/hold?t=' + GATE_TOKEN, {{ mode: 'no-cors' }}).catch(() => {{}});\n\
             function gate_release() {{\n\
               const release = GATE + '/release?t=' + GATE_TOKEN;\n\
               fetch(release, {{ mode: 'no-cors' }}).catch(() => {{\n\
                 const frame = document.createElement('iframe');\n\
                 frame.src = release;\n\
                 document.body.appendChild(frame);\n\
               }});\n\
             }}\n",
            port = self.port
        )
    }
}

impl Drop for Gate {
    fn drop(&mut self) {
        self.server.abort();
    }
}
