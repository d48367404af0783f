//! The head of one HTTP/1.1 request, for the examples' loopback page servers
//! (`serve_load upstream`, `soak`).

use tokio::io::AsyncReadExt;

/// Reads until the blank line that ends the request head; `None` when the
/// client closes or fails first. The bytes after the head, if any, come with it.
pub(crate) async fn read_head(stream: &mut tokio::net::TcpStream) -> Option<Vec<u8>> {
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    Some(head)
}
