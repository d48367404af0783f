//! The robots.txt fetch policy as pure decisions (SRD 3.3.1, 3.3.3: FR-WF-09, 09a,
//! 09c, ROBOTS-REDIR-02, ROBOTS-TIMEOUT-01, ROBOTS-CACHE-02, ROBOTS-CACHE-04).
//!
//! The HTTP edge reduces a robots.txt retrieval to a [`FetchOutcome`]; [`resolve`]
//! turns it into rules, a fail-open allow-all, or the error to return, and says
//! whether the result may be cached. [`check_scope`] is the redirect rule the edge
//! applies to every robots.txt hop. Neither does I/O.

use bytes::Bytes;

use super::matcher::Rules;
use super::parse::RobotsTxt;
use crate::canonical_url::{CanonicalUrl, Origin};
use crate::error::{ErrorCode, FetchError, TimeoutPhase};

/// `details.error` of a robots.txt redirect that leaves the robots origin scope
/// (FR-WF-ROBOTS-REDIR-02).
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) const CROSS_ORIGIN_REDIRECT: &str = "robots_cross_origin_redirect";

/// How a robots.txt retrieval ended, as the policy needs to know it.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) enum FetchOutcome {
    /// Final status 200 with the decompressed body, cut at `max_robots_bytes`
    /// (`truncated` when bytes were left unread, FR-WF-ROBOTS-SIZE-01).
    Body {
        /// The body prefix.
        body: Bytes,
        /// Whether the size cap cut the body.
        truncated: bool,
    },
    /// Any other final (non-redirect) status.
    Status(u16),
    /// The time budget ran out, whatever the phase the client saw.
    TimedOut,
    /// Any other failure: DNS, connection, TLS, SSRF or port policy on a hop, redirect
    /// limit, invalid Location, or a hop out of the robots origin scope.
    Failed(FetchError),
}

/// What the policy decided for one origin.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Resolution {
    /// The rules to enforce; empty for the allow-all of 404/4xx and of empty or
    /// malformed files (FR-WF-09, 09b, 09c). Cacheable (ROBOTS-CACHE-02).
    Rules(Rules),
    /// robots.txt was unavailable and `fail_open` is set: allow-all with the
    /// `robots_unavailable_fail_open` note. Never cached (ROBOTS-CACHE-04).
    FailOpen,
    /// The fetch must fail with this error (`timeout` phase `robots`, or
    /// `robots_unavailable`). Never cached.
    Refused(FetchError),
}

impl Resolution {
    /// Whether the outcome may be stored in the origin cache: only real rules and
    /// allow-all decisions, never a fail-open or an error (ROBOTS-CACHE-02, 04).
    #[cfg(test)]
    pub(crate) fn is_cacheable(&self) -> bool {
        matches!(self, Resolution::Rules(_))
    }
}

/// The parameters of the decision that come from the configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PolicyParams<'a> {
    /// `robots.fail_open`.
    pub fail_open: bool,
    /// `robots.user_agent_token`, for group selection.
    pub user_agent_token: &'a str,
    /// The budget reported in `timeout` errors, `timeout_seconds * 1000`
    /// (SRD-READINGS 10).
    pub timeout_ms: u64,
}

/// Decides what a retrieval outcome means for `origin` (FR-WF-09, 09a, 09c).
///
/// Non-200 statuses outside 4xx (5xx, 1xx, 3xx that are not followed, other 2xx)
/// are "unavailable" like network failures (SRD-READINGS 13): RFC 9309 only calls
/// 200 with a body a success, and FR-WF-07a2 treats every other 2xx as an error.
/// `ssrf_blocked` and `port_blocked` are returned unchanged, with or without
/// `fail_open`: they are the refusals the document fetch itself would give.
pub(crate) fn resolve(
    outcome: FetchOutcome,
    origin: &Origin,
    params: &PolicyParams<'_>,
) -> Resolution {
    let unavailable = |error: FetchError| {
        if params.fail_open {
            Resolution::FailOpen
        } else {
            Resolution::Refused(error)
        }
    };
    match outcome {
        FetchOutcome::Body { body, truncated } => {
            Resolution::Rules(RobotsTxt::parse(&body, truncated).rules_for(params.user_agent_token))
        }
        FetchOutcome::Status(status) if (400..500).contains(&status) => {
            Resolution::Rules(Rules::allow_all())
        }
        FetchOutcome::Status(status) => {
            let error = if status >= 500 {
                "http_5xx"
            } else {
                "unexpected_status"
            };
            unavailable(FetchError::robots_unavailable_status(
                &origin.to_string(),
                error,
                status,
            ))
        }
        FetchOutcome::TimedOut => {
            unavailable(FetchError::timeout(params.timeout_ms, TimeoutPhase::Robots))
        }
        FetchOutcome::Failed(error) if error.code == ErrorCode::Timeout => {
            unavailable(FetchError::timeout(params.timeout_ms, TimeoutPhase::Robots))
        }
        // A hop refused by the SSRF or port policy is a security refusal, not an
        // unavailable file: it keeps its own code and never fails open
        // (ROBOTS-FETCH-01 "the same SSRF validation and port policy as document
        // fetching"; Appendix B checks SSRF before robots).
        FetchOutcome::Failed(error)
            if matches!(error.code, ErrorCode::SsrfBlocked | ErrorCode::PortBlocked) =>
        {
            Resolution::Refused(error)
        }
        FetchOutcome::Failed(error) => unavailable(FetchError::robots_unavailable(
            &origin.to_string(),
            failure_reason(&error),
        )),
    }
}

/// The `details.error` of `robots_unavailable` for a failed retrieval: the stable
/// token a scope violation or a `network` error carries (`robots_cross_origin_redirect`,
/// `tls_validation_failed`, `unexpected_status`, the connection error), else the
/// failing error's own code (`dns_failed`, `ssrf_blocked`, `redirect_limit`, ...).
fn failure_reason(error: &FetchError) -> String {
    match (error.code, error.details.error()) {
        (ErrorCode::RobotsUnavailable | ErrorCode::Network, Some(detail)) => detail.to_owned(),
        (code, _) => code.as_str().to_owned(),
    }
}

/// The robots origin scope of FR-WF-ROBOTS-REDIR-02 for one redirect hop of the
/// robots.txt retrieval of `origin`: the host must stay the same, the scheme may only
/// go from `http` to `https` (never back, so `from` is checked too), and the
/// effective port must stay the same, a move between the two default ports
/// (80 for http, 443 for https) counting as the same. Anything else is
/// `robots_unavailable` with `details.error = "robots_cross_origin_redirect"`.
pub(crate) fn check_scope(
    origin: &Origin,
    from: &CanonicalUrl,
    to: &CanonicalUrl,
) -> Result<(), FetchError> {
    let scheme_ok =
        to.scheme() == origin.scheme() || (origin.scheme() == "http" && to.scheme() == "https");
    let no_downgrade = !(from.scheme() == "https" && to.scheme() == "http");
    // Hosts of canonical URLs are already lowercase and IDNA-normalised.
    let host_ok = to.host_str() == origin.host();
    let port_ok = to.port() == origin.port()
        || (is_default_port(to.scheme(), to.port())
            && is_default_port(origin.scheme(), origin.port()));
    if scheme_ok && no_downgrade && host_ok && port_ok {
        Ok(())
    } else {
        Err(FetchError::robots_unavailable(
            &origin.to_string(),
            CROSS_ORIGIN_REDIRECT,
        ))
    }
}

fn is_default_port(scheme: &str, port: u16) -> bool {
    matches!((scheme, port), ("http", 80) | ("https", 443))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    fn url(text: &str) -> CanonicalUrl {
        CanonicalUrl::parse(text).unwrap()
    }

    fn params(fail_open: bool) -> PolicyParams<'static> {
        PolicyParams {
            fail_open,
            user_agent_token: "forge-webfetch",
            timeout_ms: 1000,
        }
    }

    fn origin() -> Origin {
        url("https://e.example/").origin()
    }

    #[test]
    fn fr_wf_09c_every_4xx_is_cacheable_allow_all() {
        for status in [400, 401, 403, 404, 410, 429, 499] {
            let resolution = resolve(FetchOutcome::Status(status), &origin(), &params(false));
            assert_eq!(
                resolution,
                Resolution::Rules(Rules::allow_all()),
                "{status}"
            );
            assert!(resolution.is_cacheable());
        }
    }

    #[test]
    fn fr_wf_09a_5xx_and_odd_statuses_are_unavailable() {
        for (status, error) in [
            (500, "http_5xx"),
            (503, "http_5xx"),
            (204, "unexpected_status"),
            (304, "unexpected_status"),
        ] {
            let Resolution::Refused(e) =
                resolve(FetchOutcome::Status(status), &origin(), &params(false))
            else {
                panic!("{status} must be refused");
            };
            assert_eq!(e.code, ErrorCode::RobotsUnavailable);
            assert_eq!(e.details_json()["error"], error);
            assert_eq!(e.details_json()["origin"], "https://e.example");
            assert_eq!(e.details_json()["status"], status);
            let open = resolve(FetchOutcome::Status(status), &origin(), &params(true));
            assert_eq!(open, Resolution::FailOpen);
            assert!(!open.is_cacheable());
        }
    }

    #[test]
    fn robots_timeout_01_any_timeout_becomes_phase_robots() {
        for outcome in [
            FetchOutcome::TimedOut,
            FetchOutcome::Failed(FetchError::timeout(1000, TimeoutPhase::Connect)),
        ] {
            let Resolution::Refused(e) = resolve(outcome.clone(), &origin(), &params(false)) else {
                panic!("timeouts are refused without fail_open");
            };
            assert_eq!(e.code, ErrorCode::Timeout);
            assert_eq!(e.details_json()["phase"], "robots");
            assert_eq!(e.details_json()["timeout_ms"], 1000);
            assert_eq!(
                resolve(outcome, &origin(), &params(true)),
                Resolution::FailOpen
            );
        }
    }

    #[test]
    fn failures_carry_a_stable_reason() {
        let cases = [
            (FetchError::dns_failed("e.example", "nx"), "dns_failed"),
            (
                FetchError::network("connection refused"),
                "connection refused",
            ),
            (
                FetchError::tls_validation_failed("bad"),
                "tls_validation_failed",
            ),
            (FetchError::redirect_limit(6, 5), "redirect_limit"),
            (FetchError::invalid_url("", "no Location"), "invalid_url"),
            (
                FetchError::robots_unavailable("https://e.example", CROSS_ORIGIN_REDIRECT),
                CROSS_ORIGIN_REDIRECT,
            ),
        ];
        for (error, reason) in cases {
            let Resolution::Refused(e) =
                resolve(FetchOutcome::Failed(error), &origin(), &params(false))
            else {
                panic!("failures are refused without fail_open");
            };
            assert_eq!(e.code, ErrorCode::RobotsUnavailable);
            assert_eq!(e.details_json()["error"], reason);
        }
    }

    #[test]
    fn ssrf_and_port_refusals_keep_their_code_and_never_fail_open() {
        let blocked = FetchError::ssrf_blocked(
            "10.0.0.1".parse().unwrap(),
            "10.0.0.0/8",
            "block_private_ips",
        );
        let port = FetchError::port_blocked(8080, &[80, 443]);
        for error in [blocked, port] {
            for fail_open in [false, true] {
                let resolution = resolve(
                    FetchOutcome::Failed(error.clone()),
                    &origin(),
                    &params(fail_open),
                );
                assert_eq!(resolution, Resolution::Refused(error.clone()));
                assert!(!resolution.is_cacheable());
            }
        }
    }

    #[test]
    fn a_body_is_parsed_for_the_token() {
        let body = Bytes::from_static(b"User-agent: forge-webfetch\nDisallow: /p\n");
        let Resolution::Rules(rules) = resolve(
            FetchOutcome::Body {
                body,
                truncated: false,
            },
            &origin(),
            &params(false),
        ) else {
            panic!("a body gives rules");
        };
        assert!(!rules.is_allowed("/p"));
    }

    #[test]
    fn robots_redir_02_scope_table() {
        let cases = [
            (
                "http://e.example/robots.txt",
                "https://e.example/robots.txt",
                true,
            ),
            (
                "http://e.example/robots.txt",
                "http://e.example/other.txt",
                true,
            ),
            (
                "https://e.example/robots.txt",
                "http://e.example/robots.txt",
                false,
            ),
            (
                "https://e.example/robots.txt",
                "https://other.example/robots.txt",
                false,
            ),
            (
                "https://e.example/robots.txt",
                "https://E.EXAMPLE:443/r",
                true,
            ),
            (
                "http://e.example:8080/robots.txt",
                "https://e.example:8080/robots.txt",
                true,
            ),
            (
                "http://e.example:8080/robots.txt",
                "https://e.example/robots.txt",
                false,
            ),
            (
                "http://e.example/robots.txt",
                "http://e.example:8080/robots.txt",
                false,
            ),
            (
                "https://e.example/robots.txt",
                "https://sub.e.example/robots.txt",
                false,
            ),
        ];
        for (from, to, ok) in cases {
            let from = url(from);
            let result = check_scope(&from.origin(), &from, &url(to));
            assert_eq!(result.is_ok(), ok, "{from} -> {to}");
            if let Err(e) = result {
                assert_eq!(e.details_json()["error"], CROSS_ORIGIN_REDIRECT);
            }
        }
        // http -> https -> http: back to the origin's scheme, but a downgrade.
        let origin = url("http://e.example/robots.txt").origin();
        assert!(
            check_scope(
                &origin,
                &url("https://e.example/robots.txt"),
                &url("http://e.example/robots.txt")
            )
            .is_err()
        );
    }
}
