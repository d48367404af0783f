//! The addresses validated for each host within one tool call (FR-WF-DNS-01
//! step 3).
//!
//! A name is resolved once per tool call, however many requests it serves:
//! robots.txt, the document, the browser's top document and its subresources all
//! connect to the set validated the first time. A TTL-0 name that answers
//! differently each time can not swap a public address for a private one between
//! two requests of the same call, and a call costs one resolution per host.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use tokio::sync::OnceCell;

use crate::error::FetchError;

/// Each host's validated addresses, resolved once per tool call and shared by
/// every stage of it. Cheap to clone; clones share the resolutions.
#[derive(Clone, Default)]
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) struct ResolvedHosts {
    hosts: Arc<Mutex<HashMap<String, Arc<Resolution>>>>,
}

/// A host's one resolution: the validated, ordered addresses, or why there are
/// none (`ssrf_blocked`, `dns_failed`). Unset until the first lookup completes;
/// a lookup cut short by its budget leaves it unset for the next request.
type Resolution = OnceCell<Result<Vec<IpAddr>, FetchError>>;

impl ResolvedHosts {
    /// No host resolved yet.
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn new() -> ResolvedHosts {
        ResolvedHosts::default()
    }

    /// The validated addresses of `name`, resolving with `lookup` only if no
    /// request of this call has resolved it yet. Concurrent callers wait for one
    /// lookup instead of each running their own.
    pub(crate) async fn addresses<F>(
        &self,
        name: &str,
        lookup: F,
    ) -> Result<Vec<IpAddr>, FetchError>
    where
        F: Future<Output = Result<Vec<IpAddr>, FetchError>>,
    {
        let resolution = {
            let mut hosts = self.hosts.lock().unwrap_or_else(|e| e.into_inner());
            Arc::clone(hosts.entry(name.to_owned()).or_default())
        };
        resolution.get_or_init(|| lookup).await.clone()
    }

    /// The names resolved so far (diagnostics and tests).
    pub(crate) fn names(&self) -> Vec<String> {
        let hosts = self.hosts.lock().unwrap_or_else(|e| e.into_inner());
        let mut names: Vec<String> = hosts
            .iter()
            .filter(|(_, resolution)| resolution.initialized())
            .map(|(name, _)| name.clone())
            .collect();
        names.sort();
        names
    }
}

impl fmt::Debug for ResolvedHosts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResolvedHosts")
            .field("resolved_hosts", &self.names())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[tokio::test]
    async fn one_lookup_per_host() {
        let hosts = ResolvedHosts::new();
        let lookups = AtomicUsize::new(0);
        let lookup = || async {
            lookups.fetch_add(1, Ordering::SeqCst);
            Ok(vec![IpAddr::V4(Ipv4Addr::new(93, 184, 216, 34))])
        };
        for _ in 0..3 {
            let addresses = hosts.addresses("a.test", lookup()).await.unwrap();
            assert_eq!(addresses.len(), 1);
        }
        hosts.addresses("b.test", lookup()).await.unwrap();
        assert_eq!(lookups.load(Ordering::SeqCst), 2);
        // Clones share the hosts.
        hosts.clone().addresses("a.test", lookup()).await.unwrap();
        assert_eq!(lookups.load(Ordering::SeqCst), 2);
        assert_eq!(hosts.names(), ["a.test", "b.test"]);
    }

    #[tokio::test]
    async fn a_refusal_is_kept_and_an_abandoned_lookup_is_not() {
        let hosts = ResolvedHosts::new();
        let refused = hosts
            .addresses("bad.test", async { Err(FetchError::internal("refused")) })
            .await;
        assert!(refused.is_err());
        let again = hosts.addresses("bad.test", async { Ok(Vec::new()) }).await;
        assert!(again.is_err(), "the refusal stands for the whole call");

        // A lookup dropped by its caller's budget leaves the host unresolved.
        let abandoned = tokio::time::timeout(
            std::time::Duration::from_millis(1),
            hosts.addresses("slow.test", std::future::pending()),
        )
        .await;
        assert!(abandoned.is_err());
        assert!(hosts.names().iter().all(|h| h != "slow.test"));
    }
}
