//! What a waiting client is told while a call works: the stages of one fetch
//! (resolved, connected, headers, the body as it arrives, rendering, reading,
//! extracting, chunking), as short sentences, for MCP's
//! `notifications/progress` (a request that carries a `progressToken`).
//!
//! The front door that wants them runs the call inside [`Progress::scope`]; the
//! stages deep in the pipeline call [`report`], which finds the call's sink in a
//! task-local and does nothing without one. A parameter through every stage
//! would be noise for a hook that never changes an answer. Reports are made on
//! the call's own task (the blocking threads of the readers report nothing: the
//! stage that starts them does), and never more than [`MAX_PER_SECOND`] in any
//! second reach the client: a report past that is dropped (the next one says
//! where the call is), but for the last page of a batch, which says it is done. The body is told once per MiB or second at most.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// At most this many notifications a second reach a client.
pub(crate) const MAX_PER_SECOND: u32 = 10;

/// The body's progress is told at most once per MiB or per second.
const BODY_STEP_BYTES: u64 = 1 << 20;
const BODY_STEP_TIME: Duration = Duration::from_secs(1);

/// One stage of a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Stage {
    /// The host's addresses are known and allowed.
    Resolved {
        /// The host name (or literal address).
        host: String,
    },
    /// A connection to the host is open (TLS included).
    Connected {
        /// The host name.
        host: String,
    },
    /// The response head arrived.
    Headers {
        /// Its status code.
        status: u16,
    },
    /// Body bytes arrived (decoded), so far.
    Body {
        /// Bytes read so far.
        bytes: u64,
    },
    /// A browser renders the page.
    Rendering,
    /// A PDF's text is being read.
    ReadingPdf,
    /// The page's content is being extracted.
    Extracting,
    /// The Markdown is being cut into chunks.
    Chunking,
    /// A batch finished one of its pages.
    BatchItem {
        /// Pages finished so far.
        done: usize,
        /// Pages in the batch.
        total: usize,
        /// The page just finished, redacted.
        url: String,
    },
}

impl Stage {
    /// A short sentence a person understands.
    pub(crate) fn message(&self) -> String {
        match self {
            Stage::Resolved { host } => format!("resolved {host}"),
            Stage::Connected { host } => format!("connected to {host}"),
            Stage::Headers { status } => format!("response {status}, reading the body"),
            Stage::Body { bytes } => format!("received {}", human_bytes(*bytes)),
            Stage::Rendering => "rendering the page in a browser".to_owned(),
            Stage::ReadingPdf => "reading the PDF".to_owned(),
            Stage::Extracting => "extracting the content".to_owned(),
            Stage::Chunking => "cutting the content into chunks".to_owned(),
            Stage::BatchItem { done, total, url } => format!("read {done} of {total}: {url}"),
        }
    }

    /// The last page of a batch is told whatever the rate: it says the batch
    /// is done.
    fn is_final(&self) -> bool {
        matches!(self, Stage::BatchItem { done, total, .. } if done == total)
    }
}

/// `1.5 MiB`, `320 KiB`, `12 bytes`.
fn human_bytes(bytes: u64) -> String {
    #[expect(clippy::cast_precision_loss, reason = "a figure for people")]
    let value = bytes as f64;
    if bytes >= 1 << 20 {
        format!("{:.1} MiB", value / f64::from(1 << 20))
    } else if bytes >= 1 << 10 {
        format!("{:.0} KiB", value / f64::from(1 << 10))
    } else {
        format!("{bytes} bytes")
    }
}

/// Where a call's progress goes: the front door's sink, behind the rate limit.
#[derive(Clone)]
pub(crate) struct Progress {
    inner: Arc<Inner>,
}

struct Inner {
    sink: Box<dyn Fn(Report) + Send + Sync>,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Reports sent so far: the `progress` value, increasing.
    sent: u32,
    /// When the last [`MAX_PER_SECOND`] reports were sent, oldest first.
    recent: VecDeque<Instant>,
    /// The body bytes and time last told.
    body_told: Option<(u64, Instant)>,
}

/// One notification: its increasing count and its sentence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Report {
    /// 1 for the first report of the call, then 2, 3, ...
    pub progress: u32,
    /// What happened.
    pub message: String,
}

impl Progress {
    /// Progress that goes to `sink`.
    pub(crate) fn new(sink: impl Fn(Report) + Send + Sync + 'static) -> Progress {
        Progress {
            inner: Arc::new(Inner {
                sink: Box::new(sink),
                state: Mutex::new(State::default()),
            }),
        }
    }

    /// Runs `call` with this progress as the one [`report`] reaches.
    pub(crate) async fn scope<F: Future>(self, call: F) -> F::Output {
        CURRENT.scope(self, call).await
    }

    /// Tells `stage`, unless it comes too soon (see the module doc).
    fn tell(&self, stage: &Stage, now: Instant) {
        let report = {
            let Ok(mut state) = self.inner.state.lock() else {
                return;
            };
            if let Stage::Body { bytes } = stage {
                let due = state.body_told.is_none_or(|(told, at)| {
                    bytes.saturating_sub(told) >= BODY_STEP_BYTES
                        || now.duration_since(at) >= BODY_STEP_TIME
                });
                if !due {
                    return;
                }
            }
            let window = Duration::from_secs(1);
            while state
                .recent
                .front()
                .is_some_and(|at| now.duration_since(*at) >= window)
            {
                state.recent.pop_front();
            }
            if state.recent.len() >= MAX_PER_SECOND as usize && !stage.is_final() {
                return;
            }
            if let Stage::Body { bytes } = stage {
                state.body_told = Some((*bytes, now));
            }
            state.sent += 1;
            state.recent.push_back(now);
            Report {
                progress: state.sent,
                message: stage.message(),
            }
        };
        (self.inner.sink)(report);
    }
}

tokio::task_local! {
    static CURRENT: Progress;
}

/// Runs `work` with no progress told: what a call does besides its document
/// (robots.txt) would only confuse a waiting client.
pub(crate) async fn quiet<F: Future>(work: F) -> F::Output {
    CURRENT.scope(Progress::new(|_| {}), work).await
}

/// Tells the waiting client, if any, that the call reached `stage`.
pub(crate) fn report(stage: Stage) {
    let _ = CURRENT.try_with(|progress| progress.tell(&stage, Instant::now()));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collected() -> (Progress, Arc<Mutex<Vec<Report>>>) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&seen);
        let progress = Progress::new(move |report| kept.lock().unwrap().push(report));
        (progress, seen)
    }

    #[test]
    fn each_stage_is_told_once_in_words_with_an_increasing_count() {
        let (progress, seen) = collected();
        let now = Instant::now();
        for stage in [
            Stage::Resolved {
                host: "example.com".into(),
            },
            Stage::Connected {
                host: "example.com".into(),
            },
            Stage::Headers { status: 200 },
            Stage::Extracting,
            Stage::Chunking,
        ] {
            progress.tell(&stage, now);
        }
        let seen = seen.lock().unwrap();
        let messages: Vec<&str> = seen.iter().map(|r| r.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "resolved example.com",
                "connected to example.com",
                "response 200, reading the body",
                "extracting the content",
                "cutting the content into chunks"
            ]
        );
        let counts: Vec<u32> = seen.iter().map(|r| r.progress).collect();
        assert_eq!(counts, [1, 2, 3, 4, 5]);
    }

    #[test]
    fn the_body_is_told_per_mib_or_second_and_never_ten_times_a_second() {
        let (progress, seen) = collected();
        let start = Instant::now();
        // 64 KiB every 10 ms for 3 s: 19 MiB in all.
        for step in 0..300u64 {
            let at = start + Duration::from_millis(step * 10);
            progress.tell(
                &Stage::Body {
                    bytes: step * 65_536,
                },
                at,
            );
        }
        let seen = seen.lock().unwrap();
        // 19 MiB in 3 s: once per MiB.
        assert_eq!(seen.len(), 19, "{seen:?}");
        assert_eq!(seen[0].message, "received 0 bytes");
        assert_eq!(seen[1].message, "received 1.0 MiB");
        assert!(seen.last().unwrap().message.ends_with("MiB"));
    }

    #[test]
    fn no_more_than_ten_reports_reach_the_client_in_any_second() {
        let (progress, seen) = collected();
        let start = Instant::now();
        // Redirect hops: three stages each, every 20 ms, for 2 s.
        for hop in 0..100u64 {
            let at = start + Duration::from_millis(hop * 20);
            progress.tell(
                &Stage::Resolved {
                    host: format!("h{hop}"),
                },
                at,
            );
            progress.tell(
                &Stage::Connected {
                    host: format!("h{hop}"),
                },
                at,
            );
            progress.tell(&Stage::Headers { status: 301 }, at);
        }
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 20, "{seen:?}");
    }

    #[tokio::test]
    async fn reports_reach_only_the_scope_they_are_made_in() {
        report(Stage::Rendering);
        let (progress, seen) = collected();
        progress
            .scope(async {
                report(Stage::ReadingPdf);
            })
            .await;
        report(Stage::Chunking);
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 1);
        assert_eq!(seen[0].message, "reading the PDF");
    }
}
