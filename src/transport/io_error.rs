//! The `details.error` token of a socket error, shared by every stage that
//! touches a socket (connect, proxy tunnel, TLS): a leaf, so none of them depends
//! on another for it.

use std::io;

/// A stable `details.error` text for a socket error: a snake_case token for the
/// common kinds, the OS message otherwise.
pub(crate) fn io_error_token(error: &io::Error) -> String {
    let token = match error.kind() {
        io::ErrorKind::ConnectionRefused => "connection_refused",
        io::ErrorKind::ConnectionReset => "connection_reset",
        io::ErrorKind::ConnectionAborted => "connection_aborted",
        io::ErrorKind::HostUnreachable => "host_unreachable",
        io::ErrorKind::NetworkUnreachable => "network_unreachable",
        io::ErrorKind::AddrNotAvailable => "address_not_available",
        io::ErrorKind::TimedOut => "connect_timed_out",
        io::ErrorKind::UnexpectedEof => "connection_closed",
        io::ErrorKind::BrokenPipe => "broken_pipe",
        _ => return error.to_string(),
    };
    token.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_tokens_are_stable() {
        let refused = io::Error::from(io::ErrorKind::ConnectionRefused);
        assert_eq!(io_error_token(&refused), "connection_refused");
        let other = io::Error::other("weird");
        assert_eq!(io_error_token(&other), "weird");
    }

    #[test]
    fn timed_out_share_reads_like_a_timed_out_connect() {
        let timed_out = io::Error::from(io::ErrorKind::TimedOut);
        assert_eq!(io_error_token(&timed_out), "connect_timed_out");
    }
}
