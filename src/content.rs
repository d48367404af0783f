//! Content handling after the fetch: media type and sniffing, charset decoding (SRD 3.4.2),
//! and the extension formats of issue 31.

pub mod charset;
pub mod media_type;
pub mod formats;
pub mod feed;
pub mod json;
pub mod pdf;
pub mod describe;
