//! The cl100k_base vocabulary as static tables, and tiktoken's byte-pair merge
//! over them (FR-WF-14).
//!
//! Why: a CLI call counts tokens once or twice, and building the `bpe` crate's
//! tables (hash maps and three Aho-Corasick automata over 100,256 tokens) cost
//! most of a cached call's time and 30 MB of its memory. These tables
//! cost nothing to load: the tokens are compiled in (`cl100k_base.bin`, the
//! official vocabulary in rank order) and the lookup table is laid out by
//! `build.rs`; both are read in place, so a call touches only the pages it needs.
//!
//! A piece is counted with tiktoken's own merge loop (repeatedly merge the
//! adjacent pair whose concatenation has the lowest rank), which is the reference
//! the counts are defined by. That loop is quadratic in the piece's length, so
//! pieces longer than [`MAX_MERGE_BYTES`] go to the `bpe` crate's linear encoder
//! instead (built on first use: only a hostile or unusual text, a long word or a
//! base64 blob, pays for it).

/// The token count and lengths (`cl100k_base.bin`, see `build.rs`).
const VOCAB: &[u8] = include_bytes!("cl100k_base.bin");
/// Token offsets then hash slots (`build.rs`).
const TABLE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/cl100k_table.bin"));

/// Pieces up to this long are merged here; longer ones by the `bpe` crate.
pub(super) const MAX_MERGE_BYTES: usize = 64;

/// The number of tokens (ranks `0..TOKENS`).
const TOKENS: usize = 100_256;
const SLOTS: usize = 1 << super::vocab_hash::SLOT_BITS;
/// Where the tokens' bytes start in [`VOCAB`].
const BYTES_AT: usize = 4 + TOKENS;

fn table_u32(index: usize) -> u32 {
    let at = index * 4;
    match TABLE.get(at..at + 4) {
        Some(&[a, b, c, d]) => u32::from_le_bytes([a, b, c, d]),
        _ => 0,
    }
}

/// The bytes of token `rank` (empty for a rank out of range).
pub(super) fn token_bytes(rank: u32) -> &'static [u8] {
    let rank = rank as usize;
    if rank >= TOKENS {
        return &[];
    }
    let (start, end) = (table_u32(rank) as usize, table_u32(rank + 1) as usize);
    VOCAB.get(BYTES_AT + start..BYTES_AT + end).unwrap_or(&[])
}

/// The rank of the token whose bytes are exactly `bytes`, if there is one.
pub(super) fn rank(bytes: &[u8]) -> Option<u32> {
    let mut slot = super::vocab_hash::hash(bytes) as usize;
    loop {
        let entry = table_u32(TOKENS + 1 + slot);
        if entry == 0 {
            return None;
        }
        if token_bytes(entry - 1) == bytes {
            return Some(entry - 1);
        }
        slot = (slot + 1) & (SLOTS - 1);
    }
}

/// The number of tokens tiktoken encodes `piece` into, for a piece of at most
/// [`MAX_MERGE_BYTES`] bytes: tiktoken's `_byte_pair_merge`, counting the parts
/// left when no adjacent pair forms a token. Ties go to the leftmost pair, as
/// there.
pub(super) fn merge_count(piece: &[u8]) -> usize {
    if piece.len() <= 1 || rank(piece).is_some() {
        return piece.len().min(1);
    }
    const NONE: u32 = u32::MAX;
    // parts[i] = (start of part i, rank of part i joined with part i + 1).
    let mut parts: [(u8, u32); MAX_MERGE_BYTES + 1] = [(0, NONE); MAX_MERGE_BYTES + 1];
    let n = piece.len().min(MAX_MERGE_BYTES);
    let piece = &piece[..n];
    for (i, part) in parts.iter_mut().enumerate().take(n + 1) {
        part.0 = i as u8;
        if i + 1 < n {
            part.1 = rank(&piece[i..i + 2]).unwrap_or(NONE);
        }
    }
    // parts[..len] are live; parts[len - 1] is the end sentinel.
    let mut len = n + 1;
    let pair_rank = |parts: &[(u8, u32)], len: usize, i: usize| {
        if i + 3 < len {
            rank(&piece[parts[i].0 as usize..parts[i + 3].0 as usize]).unwrap_or(NONE)
        } else {
            NONE
        }
    };
    loop {
        let mut best = (NONE, 0);
        for (i, &(_, r)) in parts[..len - 1].iter().enumerate() {
            if r < best.0 {
                best = (r, i);
            }
        }
        if best.0 == NONE {
            break;
        }
        let i = best.1;
        if i > 0 {
            parts[i - 1].1 = pair_rank(&parts, len, i - 1);
        }
        parts[i].1 = pair_rank(&parts, len, i);
        parts.copy_within(i + 2..len, i + 1);
        len -= 1;
    }
    len - 1
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The compiled-in vocabulary is the `bpe-openai` crate's cl100k_base, token for
    /// token, and every token is found at its own rank.
    #[test]
    fn the_tables_hold_bpe_openais_cl100k_vocabulary() {
        let bpe = &bpe_openai::cl100k_base().bpe;
        assert_eq!(bpe.num_tokens(), TOKENS);
        for id in 0..TOKENS as u32 {
            assert_eq!(token_bytes(id), bpe.token_bytes(id), "token {id}");
            assert_eq!(rank(bpe.token_bytes(id)), Some(id), "token {id}");
        }
        assert_eq!(rank(b"no such token here, surely"), None);
        assert_eq!(token_bytes(TOKENS as u32), b"");
    }

    /// The merge counts what the `bpe` crate's encoder counts, on every short
    /// prefix of a mixed text.
    #[test]
    fn merge_counts_equal_the_bpe_crate() {
        let bpe = &bpe_openai::cl100k_base().bpe;
        let text = "abcdefghijklmnopqrstuvwxyz0123456789 the quick brown fox 日本語の😀👨\u{200d}👩 \
                    aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa \
                    !!!!!!!!???????....------======########         \n\n\n\n\t\t";
        let bytes = text.as_bytes();
        for start in 0..bytes.len() {
            for end in start..bytes.len().min(start + MAX_MERGE_BYTES) + 1 {
                let piece = &bytes[start..end];
                assert_eq!(merge_count(piece), bpe.count(piece), "{piece:?}");
            }
        }
    }
}
