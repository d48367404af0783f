//! Content handling after the fetch: media type and sniffing, charset decoding (SRD 3.4.2),
//! and the extension formats of issue 31.

pub(crate) mod charset;
pub(crate) mod describe;
pub(crate) mod feed;
pub(crate) mod formats;
pub(crate) mod json;
pub(crate) mod media_type;
pub(crate) mod pdf;
