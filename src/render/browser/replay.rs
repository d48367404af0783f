//! Responses our client fetched through redirects, held for Chromium's follow-up:
//! such a response is answered with a `302` to its final URL and
//! replayed when Chromium follows it, so the page sees the real URL (relative
//! links, `document.URL`, CORS) and nothing is fetched twice. A replay answers only
//! the follow-up of the request it was fetched for ([`Replays`]): a redirect the
//! page never follows (`fetch(url, {redirect: "manual"})`) can never answer a later
//! navigation, which stays a checked hop of the main chain. Also the prepared
//! `Fetch.fulfillRequest` itself ([`Fulfilment`]).

use std::collections::VecDeque;

use base64::Engine as _;
use chromiumoxide::cdp::browser_protocol::fetch::{FulfillRequestParams, HeaderEntry, RequestId};

use super::policy::{CONTENT_SECURITY_POLICY, FETCH_SLOTS, Paused, fulfil_headers};
use crate::canonical_url::CanonicalUrl;
use crate::content::charset;
use crate::content::media_type::{self, MediaKind};
use crate::transport::HttpResponse;

/// Subrequest responses waiting for Chromium to follow our `302` at most; the
/// oldest is dropped first (its follow-up, if it ever comes, is fetched again).
/// Their bodies are also bounded, to `FETCH_SLOTS` times `max_download_bytes`.
const REPLAY_ENTRIES: usize = 2 * FETCH_SLOTS;

/// A prepared `Fetch.fulfillRequest`.
#[derive(Debug, Clone)]
pub(crate) struct Fulfilment {
    status: u16,
    phrase: String,
    headers: Vec<(String, String)>,
    body: bytes::Bytes,
}

impl Fulfilment {
    pub(crate) fn from_response(response: &HttpResponse, head: bool) -> Fulfilment {
        Fulfilment {
            status: response.status,
            phrase: response.status_text.clone(),
            headers: fulfil_headers(&response.headers, response.body.len(), head),
            body: response.body.clone(),
        }
    }

    /// A main-chain document, handed to Chromium with the charset HTTP mode's rules
    /// choose for it (FR-WF-10i, SRD-READINGS 31): one `Content-Type` naming the
    /// media type selected and that charset, so both modes read the same text.
    /// Also returns the choice, for the `charset_fallback` note.
    pub(crate) fn main_document(
        response: &HttpResponse,
        kind: MediaKind,
    ) -> (Fulfilment, charset::Choice) {
        let content_type = media_type::last_content_type(&response.headers);
        let header_charset = content_type.as_deref().and_then(media_type::charset_param);
        let choice = charset::choose(
            &response.body,
            header_charset.as_deref(),
            kind == MediaKind::Html,
        );
        let mut fulfilment = Fulfilment::from_response(response, false);
        fulfilment
            .headers
            .retain(|(name, _)| !name.eq_ignore_ascii_case("content-type"));
        let essence = match kind {
            MediaKind::Html => "text/html",
            // Only the SRD's kinds are rendered: the others never get here,
            // and would be shown as text if they did.
            _ => "text/plain",
        };
        fulfilment.headers.push((
            "content-type".to_owned(),
            format!("{essence}; charset={}", choice.charset.label()),
        ));
        (fulfilment, choice)
    }

    pub(crate) fn redirect_to(location: &CanonicalUrl) -> Fulfilment {
        Fulfilment {
            status: 302,
            phrase: "Found".to_owned(),
            headers: vec![
                ("location".to_owned(), location.as_str().to_owned()),
                ("content-length".to_owned(), "0".to_owned()),
                (
                    "content-security-policy".to_owned(),
                    CONTENT_SECURITY_POLICY.to_owned(),
                ),
            ],
            body: bytes::Bytes::new(),
        }
    }

    pub(crate) fn params(&self, id: RequestId) -> FulfillRequestParams {
        let mut params = FulfillRequestParams::new(id, i64::from(self.status));
        params.response_headers = Some(
            self.headers
                .iter()
                .map(|(name, value)| HeaderEntry::new(name.clone(), value.clone()))
                .collect(),
        );
        if !self.phrase.is_empty() {
            params.response_phrase = Some(self.phrase.clone());
        }
        params.body = Some(
            base64::engine::general_purpose::STANDARD
                .encode(&self.body)
                .into(),
        );
        params
    }
}

/// A response our client reached through redirects, held for the follow-up of the
/// one request it was fetched for.
#[derive(Debug)]
pub(crate) struct Replay {
    /// The Fetch request we answered with a `302`: its follow-up names it in
    /// `redirectedRequestId`.
    answered: String,
    /// The network request (redirect chain) it belongs to.
    network_id: Option<String>,
    /// The canonical URL the `302` points to.
    url: String,
    /// Whether it is a main-chain document.
    top_frame_document: bool,
    /// The CDP resource type it was fetched as.
    resource_type: String,
    fulfilment: Fulfilment,
}

impl Replay {
    pub(crate) fn new(
        answered: &RequestId,
        paused: &Paused,
        url: &CanonicalUrl,
        fulfilment: Fulfilment,
    ) -> Replay {
        Replay {
            answered: answered.inner().clone(),
            network_id: paused.network_id.clone(),
            url: url.as_str().to_owned(),
            top_frame_document: paused.top_frame_document,
            resource_type: paused.resource_type.clone(),
            fulfilment,
        }
    }

    /// `paused` continues the request this was fetched for (Chromium followed our
    /// `302`, or the same network request moved on).
    pub(crate) fn continued_by(&self, paused: &Paused) -> bool {
        paused.redirected_from.as_deref() == Some(self.answered.as_str())
            || (self.network_id.is_some() && paused.network_id == self.network_id)
    }

    /// `paused` is the follow-up this answers: the same request's next hop, to the
    /// URL of our `302`, of the same chain and kind.
    pub(crate) fn answers(&self, paused: &Paused, url: Option<&str>) -> bool {
        self.continued_by(paused)
            && paused.method == "GET"
            && url == Some(self.url.as_str())
            && paused.top_frame_document == self.top_frame_document
            && paused.resource_type == self.resource_type
    }

    pub(crate) fn bytes(&self) -> usize {
        self.fulfilment.body.len()
    }
}

/// Responses waiting for Chromium to follow our `302`s. A replay is served only to
/// the follow-up of its own request ([`Replay::answers`]), never to another
/// request for the same URL; it is dropped when served, when its request moves on
/// without it or ends ([`Replays::ended`]), when a newer top-frame navigation
/// supersedes it, or with the render. At most one main-chain document (one
/// navigation at a time) and [`REPLAY_ENTRIES`] subrequest responses of at most
/// `max_bytes` together are held.
#[derive(Debug)]
pub(crate) struct Replays {
    main: Option<Replay>,
    subrequests: VecDeque<Replay>,
    bytes: usize,
    max_bytes: usize,
}

impl Replays {
    pub(crate) fn new(max_bytes: usize) -> Replays {
        Replays {
            main: None,
            subrequests: VecDeque::new(),
            bytes: 0,
            max_bytes,
        }
    }

    pub(crate) fn push(&mut self, replay: Replay) {
        if replay.top_frame_document {
            self.main = Some(replay);
            return;
        }
        self.bytes += replay.bytes();
        self.subrequests.push_back(replay);
        while self.subrequests.len() > REPLAY_ENTRIES || self.bytes > self.max_bytes {
            let Some(oldest) = self.subrequests.pop_front() else {
                break;
            };
            self.bytes -= oldest.bytes();
            tracing::debug!(target: "webfetch::browser", event = "replay_dropped", "replay bound reached: oldest held response dropped");
        }
    }

    /// The replay answering `paused`, if any; replays of its request that do not
    /// answer it are dropped (the request went elsewhere), and so is a main-chain
    /// replay when another top-frame navigation starts.
    pub(crate) fn take(&mut self, paused: &Paused) -> Option<Fulfilment> {
        let url = CanonicalUrl::parse(&paused.url).ok();
        let url = url.as_ref().map(CanonicalUrl::as_str);
        if let Some(main) = self
            .main
            .take_if(|main| paused.top_frame_document || main.continued_by(paused))
        {
            return main.answers(paused, url).then_some(main.fulfilment);
        }
        let mut found = None;
        let mut kept = VecDeque::with_capacity(self.subrequests.len());
        for replay in self.subrequests.drain(..) {
            if !replay.continued_by(paused) {
                kept.push_back(replay);
                continue;
            }
            self.bytes -= replay.bytes();
            if found.is_none() && replay.answers(paused, url) {
                found = Some(replay.fulfilment);
            }
        }
        self.subrequests = kept;
        found
    }

    /// The network request `network_id` ended (loaded or failed): nothing of it
    /// will follow a `302` any more.
    pub(crate) fn ended(&mut self, network_id: &str) {
        if self
            .main
            .as_ref()
            .is_some_and(|main| main.network_id.as_deref() == Some(network_id))
        {
            self.main = None;
        }
        let bytes = &mut self.bytes;
        self.subrequests.retain(|replay| {
            let keep = replay.network_id.as_deref() != Some(network_id);
            if !keep {
                *bytes -= replay.bytes();
            }
            keep
        });
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        usize::from(self.main.is_some()) + self.subrequests.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn follow_up(url: &str, kind: &str, top: bool, network: &str, from: Option<&str>) -> Paused {
        Paused {
            top_frame_document: top,
            network_id: Some(network.to_owned()),
            redirected_from: from.map(str::to_owned),
            url: url.to_owned(),
            method: "GET".to_owned(),
            resource_type: kind.to_owned(),
            forwarded: Vec::new(),
        }
    }

    fn held(len: usize) -> Fulfilment {
        Fulfilment {
            status: 200,
            phrase: String::new(),
            headers: Vec::new(),
            body: bytes::Bytes::from(vec![b'x'; len]),
        }
    }

    fn replay_of(answered: &str, original: &Paused, to: &str, len: usize) -> Replay {
        let to = CanonicalUrl::parse(to).unwrap();
        Replay::new(&RequestId::new(answered), original, &to, held(len))
    }

    #[test]
    fn a_replay_answers_only_the_follow_up_of_its_own_request() {
        let mut replays = Replays::new(1 << 20);
        // fetch('/r', {redirect: 'manual'}): our 302 to /private is never followed.
        let fetch = follow_up("http://a.test/r", "Fetch", false, "n1", None);
        replays.push(replay_of("job-1.0", &fetch, "http://a.test/private", 10));
        // A top-frame navigation to the same URL is not its follow-up.
        let nav = follow_up("http://a.test/private", "Document", true, "L2", None);
        assert!(replays.take(&nav).is_none());
        // Nor another subrequest of the same kind and URL.
        let other = follow_up("http://a.test/private", "Fetch", false, "n3", None);
        assert!(replays.take(&other).is_none());
        assert_eq!(replays.len(), 1);
        // Its request ended: dropped.
        replays.ended("n1");
        assert_eq!(replays.len(), 0);
        assert_eq!(replays.bytes, 0);

        // A followed redirect is answered once, to the same kind only.
        let script = follow_up("http://a.test/old.js", "Script", false, "n4", None);
        replays.push(replay_of("job-4.0", &script, "http://a.test/new.js", 10));
        let wrong_kind = follow_up(
            "http://a.test/new.js",
            "Fetch",
            false,
            "n4",
            Some("job-4.0"),
        );
        assert!(replays.take(&wrong_kind).is_none());
        assert_eq!(replays.len(), 0, "its request moved on: dropped");
        replays.push(replay_of("job-5.0", &script, "http://a.test/new.js", 10));
        let follow = follow_up(
            "http://a.test/new.js",
            "Script",
            false,
            "n4",
            Some("job-5.0"),
        );
        assert!(replays.take(&follow).is_some());
        assert!(replays.take(&follow).is_none());

        // The main chain's replay answers the top frame's follow-up only, and a
        // new top-frame navigation drops it.
        let main = follow_up("http://a.test/start", "Document", true, "L1", None);
        replays.push(replay_of("job-6.0", &main, "http://a.test/page", 10));
        let iframe = follow_up(
            "http://a.test/page",
            "Document",
            false,
            "L1",
            Some("job-6.0"),
        );
        assert!(replays.take(&iframe).is_none());
        replays.push(replay_of("job-6.0", &main, "http://a.test/page", 10));
        let main_follow = follow_up(
            "http://a.test/page",
            "Document",
            true,
            "L1",
            Some("job-6.0"),
        );
        assert!(replays.take(&main_follow).is_some());
        replays.push(replay_of("job-7.0", &main, "http://a.test/page", 10));
        let elsewhere = follow_up("http://a.test/page", "Document", true, "L9", None);
        assert!(replays.take(&elsewhere).is_none());
        assert_eq!(replays.len(), 0);
    }

    #[test]
    fn held_replays_are_bounded_in_count_and_bytes() {
        let mut replays = Replays::new(100);
        for i in 0..REPLAY_ENTRIES + 5 {
            let p = follow_up("http://a.test/r", "Fetch", false, &format!("n{i}"), None);
            replays.push(replay_of(&format!("job-{i}"), &p, "http://a.test/x", 1));
        }
        assert_eq!(replays.len(), REPLAY_ENTRIES);
        let p = follow_up("http://a.test/r", "Fetch", false, "big", None);
        replays.push(replay_of("job-big", &p, "http://a.test/x", 90));
        assert!(replays.bytes <= 100, "{}", replays.bytes);
        assert_eq!(replays.len(), 11);
        // The newest is kept.
        let follow = follow_up("http://a.test/x", "Fetch", false, "big", Some("job-big"));
        assert!(replays.take(&follow).is_some());
        assert_eq!(replays.bytes, 10);
    }
}
