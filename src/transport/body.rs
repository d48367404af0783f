//! Body decoding and the byte cap (FR-WF-10c, FR-WF-10e, FR-WF-19).
//!
//! The body streams from the connection through the content decoders into one
//! buffer, and the cap counts *decompressed* bytes as they come out of the
//! decoder. Nothing is ever buffered whole before decoding, reads are bounded to
//! 16 KiB, and the buffer never grows past `max + 1` bytes: a decompression bomb
//! stops at the limit having allocated about the limit. A body cut short (a
//! dropped connection, a truncated compressed stream) is an error, never a
//! partial success.

use std::io;

use async_compression::tokio::bufread::{BrotliDecoder, DeflateDecoder, GzipDecoder, ZlibDecoder};
use bytes::Bytes;
use futures_util::TryStreamExt;
use http::HeaderMap;
use http::header::{CONTENT_ENCODING, CONTENT_LENGTH};
use http_body_util::BodyDataStream;
use hyper::body::Incoming;
use tokio::io::{AsyncBufRead, AsyncRead, AsyncReadExt, BufReader};
use tokio_util::io::StreamReader;

use super::OverLimit;
use crate::error::FetchError;
use crate::progress::{self, Stage};

/// One read from the decoder; also the granularity of the cap check.
const READ_CHUNK: usize = 16 * 1024;

/// Stacked codings accepted in one `Content-Encoding` (each layer multiplies the
/// decoder state, and real servers send one).
const MAX_CODINGS: usize = 3;

/// Initial buffer when the decoded size is unknown.
const INITIAL_CAPACITY: usize = 64 * 1024;

/// A content coding the client decodes (FR-WF-10c).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Coding {
    /// `gzip` / `x-gzip`, multi-member.
    Gzip,
    /// `deflate`: zlib-wrapped per RFC 9110, raw deflate when the zlib header check
    /// fails (servers that send raw deflate are common).
    Deflate,
    /// `br`.
    Brotli,
}

/// The codings of a response in the order they were applied; `identity` dropped.
/// An unknown coding is `network` / `unsupported_content_encoding`: returning
/// still-encoded bytes as text would be garbage.
pub(crate) fn codings(headers: &HeaderMap) -> Result<Vec<Coding>, FetchError> {
    let mut found = Vec::new();
    for value in headers.get_all(CONTENT_ENCODING) {
        let text = String::from_utf8_lossy(value.as_bytes()).to_ascii_lowercase();
        for token in text.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            let coding = match token {
                "identity" => continue,
                "gzip" | "x-gzip" => Coding::Gzip,
                "deflate" => Coding::Deflate,
                "br" => Coding::Brotli,
                other => return Err(unsupported_coding(other)),
            };
            found.push(coding);
        }
    }
    if found.len() > MAX_CODINGS {
        return Err(unsupported_coding(&text_of(headers)));
    }
    Ok(found)
}

fn text_of(headers: &HeaderMap) -> String {
    headers
        .get_all(CONTENT_ENCODING)
        .iter()
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        .collect::<Vec<_>>()
        .join(", ")
}

/// `network` / `unsupported_content_encoding`, naming the coding (at most 64
/// characters of it: the header is the server's).
fn unsupported_coding(coding: &str) -> FetchError {
    let shown: String = coding.chars().take(64).collect();
    FetchError::unsupported_content_encoding(&shown)
}

/// The declared `Content-Length`, when present and well formed.
pub(crate) fn declared_length(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// The cap applied to one body.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Cap {
    /// Most decompressed bytes kept.
    pub(crate) max: u64,
    /// What crossing the cap means.
    pub(crate) over_limit: OverLimit,
}

impl Cap {
    /// SRD-READINGS 10: a declared length over the limit fails before any byte is
    /// read, with `size` = the declared length. (The declared length counts encoded
    /// bytes; FR-WF-10e allows capping those too.) Truncating callers read anyway.
    pub(crate) fn check_declared(&self, declared: Option<u64>) -> Result<(), FetchError> {
        match (declared, self.over_limit) {
            (Some(length), OverLimit::Error) if length > self.max => {
                Err(FetchError::response_too_large(length, self.max))
            }
            _ => Ok(()),
        }
    }
}

/// A fully read body.
#[derive(Debug)]
pub(crate) struct Body {
    /// Decoded bytes, at most `Cap::max`.
    pub(crate) bytes: Bytes,
    /// The cap cut the body (only with [`OverLimit::Truncate`]).
    pub(crate) truncated: bool,
}

/// Marks transport errors inside the `io::Error`s of the decoder chain, so they are
/// reported apart from malformed compressed data.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct TransportError(String);

/// Reads, decodes and caps `incoming`. `size_hint` (the declared length of an
/// unencoded body) sizes the first allocation.
pub(crate) async fn read(
    incoming: Incoming,
    codings: &[Coding],
    cap: Cap,
    size_hint: Option<u64>,
) -> Result<Body, FetchError> {
    let stream = BodyDataStream::new(incoming)
        .map_err(|e| io::Error::other(TransportError(super::request::error_chain(&e))));
    let raw: Box<dyn AsyncRead + Send + Unpin> = Box::new(StreamReader::new(stream));
    let mut reader = decoder_chain(raw, codings).await.map_err(read_error)?;
    read_capped(&mut reader, cap, size_hint).await
}

/// Wraps `raw` in one decoder per coding, the last-applied coding outermost.
async fn decoder_chain(
    raw: Box<dyn AsyncRead + Send + Unpin>,
    codings: &[Coding],
) -> io::Result<Box<dyn AsyncRead + Send + Unpin>> {
    let mut reader = raw;
    for coding in codings.iter().rev() {
        let buffered = BufReader::with_capacity(READ_CHUNK, reader);
        reader = match coding {
            Coding::Gzip => {
                let mut decoder = GzipDecoder::new(buffered);
                decoder.multiple_members(true);
                Box::new(decoder)
            }
            Coding::Brotli => Box::new(BrotliDecoder::new(buffered)),
            Coding::Deflate => deflate_decoder(buffered).await?,
        };
    }
    Ok(reader)
}

/// Chooses zlib or raw deflate from the first two bytes (RFC 1950 header check).
async fn deflate_decoder<R>(mut input: R) -> io::Result<Box<dyn AsyncRead + Send + Unpin>>
where
    R: AsyncBufRead + Send + Unpin + 'static,
{
    let mut head = [0u8; 2];
    let mut filled = 0;
    while filled < head.len() {
        let n = input.read(&mut head[filled..]).await?;
        if n == 0 {
            break;
        }
        filled += n;
    }
    let prefix = std::io::Cursor::new(head[..filled].to_vec());
    let rejoined = prefix.chain(input);
    if filled == 2 && is_zlib_header(head[0], head[1]) {
        Ok(Box::new(ZlibDecoder::new(rejoined)))
    } else {
        Ok(Box::new(DeflateDecoder::new(rejoined)))
    }
}

/// RFC 1950: method 8 (deflate), window at most 32 KiB, header checksum valid.
fn is_zlib_header(cmf: u8, flg: u8) -> bool {
    cmf & 0x0F == 8 && cmf >> 4 <= 7 && (u16::from(cmf) << 8 | u16::from(flg)) % 31 == 0
}

/// Reads at most `max + 1` decoded bytes: one byte past the cap proves the body is
/// over it, without reading (or allocating) further.
async fn read_capped<R>(
    reader: &mut R,
    cap: Cap,
    size_hint: Option<u64>,
) -> Result<Body, FetchError>
where
    R: AsyncRead + Unpin + ?Sized,
{
    let max = usize::try_from(cap.max).unwrap_or(usize::MAX - 1);
    let hard_limit = max.saturating_add(1);
    let initial = size_hint
        .and_then(|hint| usize::try_from(hint).ok())
        .unwrap_or(INITIAL_CAPACITY)
        .min(hard_limit);
    let mut body: Vec<u8> = Vec::with_capacity(initial);
    let mut chunk = vec![0u8; READ_CHUNK];
    loop {
        let want = READ_CHUNK.min(hard_limit - body.len());
        let n = reader.read(&mut chunk[..want]).await.map_err(read_error)?;
        if n == 0 {
            return Ok(Body {
                bytes: Bytes::from(body),
                truncated: false,
            });
        }
        let total = body.len() + n;
        if total > max {
            return match cap.over_limit {
                OverLimit::Error => Err(FetchError::response_too_large(total as u64, cap.max)),
                OverLimit::Truncate => {
                    let keep = max - body.len();
                    reserve_bounded(&mut body, keep, hard_limit);
                    body.extend_from_slice(&chunk[..keep]);
                    Ok(Body {
                        bytes: Bytes::from(body),
                        truncated: true,
                    })
                }
            };
        }
        reserve_bounded(&mut body, n, hard_limit);
        body.extend_from_slice(&chunk[..n]);
        progress::report(Stage::Body {
            bytes: total as u64,
        });
    }
}

/// Grows `body` for `additional` more bytes by doubling, but never past `ceiling`
/// (`Vec`'s own growth could double a nearly full buffer to twice the cap).
fn reserve_bounded(body: &mut Vec<u8>, additional: usize, ceiling: usize) {
    let needed = body.len() + additional;
    if needed <= body.capacity() {
        return;
    }
    let target = body
        .capacity()
        .saturating_mul(2)
        .max(needed)
        .min(ceiling)
        .max(needed);
    body.reserve_exact(target - body.len());
}

/// `network` for a failed read: the transport's error, or the decoder's for
/// malformed or truncated compressed data.
fn read_error(error: io::Error) -> FetchError {
    match error
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<TransportError>())
    {
        Some(transport) => FetchError::network(format!("body_read_failed: {transport}")),
        None => FetchError::network(format!("decompression_failed: {error}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;
    use http::HeaderValue;

    fn headers(encoding: &str) -> HeaderMap {
        let mut map = HeaderMap::new();
        map.insert(CONTENT_ENCODING, HeaderValue::from_str(encoding).unwrap());
        map
    }

    #[test]
    fn coding_lists() {
        assert_eq!(codings(&HeaderMap::new()).unwrap(), vec![]);
        assert_eq!(codings(&headers("GZIP")).unwrap(), vec![Coding::Gzip]);
        assert_eq!(
            codings(&headers("deflate, identity,br")).unwrap(),
            vec![Coding::Deflate, Coding::Brotli]
        );
        let unknown = codings(&headers("zstd")).unwrap_err();
        assert_eq!(unknown.code, ErrorCode::Network);
        assert_eq!(
            unknown.details_json()["error"],
            "unsupported_content_encoding"
        );
        assert_eq!(unknown.details_json()["content_encoding"], "zstd");
        assert!(codings(&headers("gzip,gzip,gzip,gzip")).is_err());
    }

    #[test]
    fn zlib_header_check() {
        assert!(is_zlib_header(0x78, 0x9C));
        assert!(is_zlib_header(0x78, 0x01));
        assert!(is_zlib_header(0x78, 0xDA));
        assert!(!is_zlib_header(0xCB, 0x48)); // raw deflate of "hello"
        assert!(!is_zlib_header(0x78, 0x9D));
    }

    #[test]
    fn declared_length_over_the_cap() {
        let cap = Cap {
            max: 10,
            over_limit: OverLimit::Error,
        };
        assert!(cap.check_declared(Some(10)).is_ok());
        assert!(cap.check_declared(None).is_ok());
        let error = cap.check_declared(Some(11)).unwrap_err();
        assert_eq!(
            (
                error.details_json()["size"].as_u64(),
                error.details_json()["max_bytes"].as_u64()
            ),
            (Some(11), Some(10))
        );
        let truncate = Cap {
            max: 10,
            over_limit: OverLimit::Truncate,
        };
        assert!(truncate.check_declared(Some(11)).is_ok());
    }

    async fn capped(data: &[u8], max: u64, over_limit: OverLimit) -> Result<Body, FetchError> {
        let mut reader = data;
        read_capped(&mut reader, Cap { max, over_limit }, None).await
    }

    #[tokio::test]
    async fn cap_counts_exactly() {
        let data = vec![7u8; 100_000];
        let exact = capped(&data, 100_000, OverLimit::Error).await.unwrap();
        assert_eq!((exact.bytes.len(), exact.truncated), (100_000, false));
        let over = capped(&data, 99_999, OverLimit::Error).await.unwrap_err();
        assert_eq!(over.code, ErrorCode::ResponseTooLarge);
        assert_eq!(over.details_json()["size"], 100_000);
        let cut = capped(&data, 50_001, OverLimit::Truncate).await.unwrap();
        assert_eq!((cut.bytes.len(), cut.truncated), (50_001, true));
    }

    #[test]
    fn growth_never_passes_the_ceiling() {
        let mut body = Vec::with_capacity(8);
        body.extend_from_slice(&[0; 8]);
        reserve_bounded(&mut body, 4, 13);
        assert!(body.capacity() >= 12);
        assert!(body.capacity() < 16 || body.capacity() == 13);
    }

    #[tokio::test]
    async fn deflate_accepts_zlib_and_raw() {
        use async_compression::tokio::bufread::{DeflateEncoder, ZlibEncoder};
        let text = b"hello hello hello hello".to_vec();
        let mut zlib = Vec::new();
        ZlibEncoder::new(&text[..])
            .read_to_end(&mut zlib)
            .await
            .unwrap();
        let mut raw = Vec::new();
        DeflateEncoder::new(&text[..])
            .read_to_end(&mut raw)
            .await
            .unwrap();
        for encoded in [zlib, raw] {
            let reader: Box<dyn AsyncRead + Send + Unpin> = Box::new(std::io::Cursor::new(encoded));
            let mut decoder = decoder_chain(reader, &[Coding::Deflate]).await.unwrap();
            let mut out = Vec::new();
            decoder.read_to_end(&mut out).await.unwrap();
            assert_eq!(out, text);
        }
    }

    #[tokio::test]
    async fn truncated_gzip_is_an_error() {
        use async_compression::tokio::bufread::GzipEncoder;
        let text = vec![b'a'; 10_000];
        let mut gz = Vec::new();
        GzipEncoder::new(&text[..])
            .read_to_end(&mut gz)
            .await
            .unwrap();
        gz.truncate(gz.len() - 6);
        let reader: Box<dyn AsyncRead + Send + Unpin> = Box::new(std::io::Cursor::new(gz));
        let mut decoder = decoder_chain(reader, &[Coding::Gzip]).await.unwrap();
        let error = read_capped(
            &mut decoder,
            Cap {
                max: 1 << 20,
                over_limit: OverLimit::Error,
            },
            None,
        )
        .await
        .unwrap_err();
        assert_eq!(error.code, ErrorCode::Network);
        assert!(
            error.details_json()["error"]
                .as_str()
                .unwrap()
                .starts_with("decompression_failed")
        );
    }
}
