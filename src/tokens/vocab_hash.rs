// The hash of the cl100k_base lookup table, shared by `build.rs` (which lays the
// table out at build time) and `src/tokens/vocab.rs` (which reads it): both must
// compute the same slot for the same bytes. Plain functions, no dependencies.

/// Slots of the open-addressing table: a power of two, about 2.6x the 100,256
/// tokens, so a lookup probes 1.3 slots on average.
pub(super) const SLOT_BITS: u32 = 18;

/// A 64-bit hash of a token's bytes, 8 bytes at a time (tokens are at most 128
/// bytes, most under 8).
pub(super) fn hash(bytes: &[u8]) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut h = 0xCBF2_9CE4_8422_2325 ^ (bytes.len() as u64).wrapping_mul(K);
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        h = (h ^ u64::from_le_bytes(word)).wrapping_mul(K);
        h ^= h >> 29;
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut word = [0u8; 8];
        word[..rest.len()].copy_from_slice(rest);
        h = (h ^ u64::from_le_bytes(word)).wrapping_mul(K);
        h ^= h >> 29;
    }
    h.wrapping_mul(K) >> (64 - SLOT_BITS)
}
