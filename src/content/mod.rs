//! Content handling after the fetch: media type and sniffing, charset decoding (SRD 3.4.2).

pub mod charset;
pub mod media_type;
