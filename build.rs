//! Lays out the cl100k_base lookup table at build time (issue 17: a CLI call must
//! not spend its start-up building a 100,000-entry hash map).
//!
//! Input: `src/tokens/cl100k_base.bin` — the token count `n` (u32 LE), the length
//! of each token in rank order (`n` bytes), then every token's bytes in rank
//! order. Output: `$OUT_DIR/cl100k_table.bin` — `n + 1` byte offsets of the
//! tokens (u32 LE) and `2^SLOT_BITS` slots (u32 LE, rank + 1, 0 = empty) of an
//! open-addressing table with linear probing, hashed by `src/tokens/vocab_hash.rs`.
//! The run-time side (`src/tokens/vocab.rs`) reads both in place.

#[path = "src/tokens/vocab_hash.rs"]
mod vocab_hash;

use std::path::PathBuf;

fn main() {
    let source = "src/tokens/cl100k_base.bin";
    println!("cargo::rerun-if-changed={source}");
    println!("cargo::rerun-if-changed=src/tokens/vocab_hash.rs");
    println!("cargo::rerun-if-changed=build.rs");
    let vocab = std::fs::read(source).expect("src/tokens/cl100k_base.bin");
    let n = u32::from_le_bytes(vocab[..4].try_into().expect("a header")) as usize;
    let lengths = &vocab[4..4 + n];
    let bytes = &vocab[4 + n..];
    let mut offsets = Vec::with_capacity(n + 1);
    let mut at = 0u32;
    for &length in lengths {
        offsets.push(at);
        at += u32::from(length);
    }
    offsets.push(at);
    assert_eq!(
        at as usize,
        bytes.len(),
        "token lengths add up to the bytes"
    );
    let slots_len = 1usize << vocab_hash::SLOT_BITS;
    let mut slots = vec![0u32; slots_len];
    for rank in 0..n {
        let token = &bytes[offsets[rank] as usize..offsets[rank + 1] as usize];
        let mut slot = vocab_hash::hash(token) as usize;
        while slots[slot] != 0 {
            let other = slots[slot] as usize - 1;
            let other = &bytes[offsets[other] as usize..offsets[other + 1] as usize];
            assert_ne!(token, other, "rank {rank} duplicates a token");
            slot = (slot + 1) & (slots_len - 1);
        }
        slots[slot] = rank as u32 + 1;
    }
    let mut table = Vec::with_capacity((offsets.len() + slots.len()) * 4);
    for value in offsets.iter().chain(&slots) {
        table.extend_from_slice(&value.to_le_bytes());
    }
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR")).join("cl100k_table.bin");
    std::fs::write(out, table).expect("write the table");
}
