//! Token-bounded chunking of Markdown (SRD 3.5.3).
