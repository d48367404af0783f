//! The ledger of a cache directory: one small file, `.webfetch-ledger`, holding the
//! entry count and byte total (FR-WF-16e, 16f, FR-WF-CCH-SIZE-02), where eviction
//! stands in the LRU snapshot ([`super::snapshot`]), and the temp file of the write
//! in progress (FR-WF-16g). Every process that changes what the limits count does
//! so holding an exclusive `flock` on this file, so a write costs a lock, a read
//! and a write of 152 bytes, whatever the number of entries.
//!
//! # Why the counts never undercount
//!
//! Counts may run high, never low: a writer adds its entry to the counts *before*
//! renaming it into place and subtracts what it replaced only *after*; an evictor
//! subtracts only after deleting. A process killed anywhere in between leaves counts
//! at or above the truth, so the limits still hold; the next full rescan (when the
//! LRU snapshot runs out) sets them back to the truth. A torn or foreign ledger
//! does not decode and is rebuilt from a rescan.
//!
//! That guarantee is about processes that die, not machines: like the entries
//! (`store.rs`), the ledger is never `fsync`ed, since a cache write must not cost a
//! disk flush on every call. After a power loss an older ledger may come back
//! beside newer entries, so the counts may run low until that next rescan.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};

use rustix::fs::FlockOperation;

use super::dir::Dir;

/// The ledger's file name in the cache directory. The leading dot keeps it out of
/// the two-level entry layout (FR-WF-16a) and of `rm cache/*`.
pub(crate) const LEDGER_NAME: &str = ".webfetch-ledger";

const MAGIC: &[u8; 8] = b"WFLEDG01";
/// Room for a temp name: 64 hex digits, `.tmp.`, 10 random characters, and slack.
const PENDING_MAX: usize = 95;
const LEN: usize = 8 + 5 * 8 + 1 + PENDING_MAX + 8;

/// What the size limits count (FR-WF-CCH-SIZE-02: on-disk bytes of entry files).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Counts {
    /// Entry files.
    pub(crate) entries: u64,
    /// Their on-disk bytes.
    pub(crate) bytes: u64,
}

/// The ledger's content.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct State {
    /// At or above the truth (module doc).
    pub(crate) counts: Counts,
    /// Which LRU snapshot file the cursor walks.
    pub(crate) snapshot: u64,
    /// Records in that snapshot.
    pub(crate) snapshot_len: u64,
    /// The next snapshot record to consider for eviction.
    pub(crate) cursor: u64,
    /// The temp file (name within its shard) of a write that has not finished: if
    /// its writer died, the next lock holder deletes it.
    pub(crate) pending: Option<String>,
}

impl State {
    /// Whether the snapshot has no record left to consider.
    pub(crate) fn snapshot_exhausted(&self) -> bool {
        self.cursor >= self.snapshot_len
    }
}

/// The ledger file, locked exclusively (`flock`) for as long as this value lives:
/// closing the file releases the lock, however the process ends.
pub(crate) struct Ledger {
    file: File,
}

impl Ledger {
    /// Opens (creating, mode 0600) the ledger of the cache directory `root` and
    /// waits for its exclusive lock. A link or anything but a regular file there
    /// is an error: nothing is written through it.
    pub(crate) fn lock(root: &Dir) -> io::Result<Ledger> {
        let file = root.open_or_create(LEDGER_NAME)?;
        loop {
            match rustix::fs::flock(&file, FlockOperation::LockExclusive) {
                Ok(()) => return Ok(Ledger { file }),
                Err(rustix::io::Errno::INTR) => continue,
                Err(errno) => return Err(errno.into()),
            }
        }
    }

    /// The state, or `None` when the file is new, torn or not ours.
    pub(crate) fn read(&mut self) -> io::Result<Option<State>> {
        let mut bytes = Vec::with_capacity(LEN);
        self.file.seek(SeekFrom::Start(0))?;
        (&mut self.file)
            .take(u64::try_from(LEN).unwrap_or(u64::MAX) + 1)
            .read_to_end(&mut bytes)?;
        Ok(decode(&bytes))
    }

    /// Overwrites the state in place (one write of [`LEN`] bytes).
    pub(crate) fn write(&mut self, state: &State) -> io::Result<()> {
        let bytes = encode(state);
        self.file.seek(SeekFrom::Start(0))?;
        self.file.write_all(&bytes)?;
        // The file never shrinks below LEN, and nothing else is ever written to it.
        Ok(())
    }
}

/// FNV-1a, enough to tell a torn or foreign file from ours.
fn checksum(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The fixed-width encoding: magic, five little-endian u64s, the pending name
/// (length byte, then padded), checksum.
pub(crate) fn encode(state: &State) -> [u8; LEN] {
    let mut out = [0u8; LEN];
    out[..8].copy_from_slice(MAGIC);
    let numbers = [
        state.counts.entries,
        state.counts.bytes,
        state.snapshot,
        state.snapshot_len,
        state.cursor,
    ];
    for (i, n) in numbers.iter().enumerate() {
        out[8 + i * 8..16 + i * 8].copy_from_slice(&n.to_le_bytes());
    }
    let at = 8 + 5 * 8;
    // A name too long for the slot is not recorded: its file is left to the
    // stale-temp sweep of a rescan. Names we make are 79 bytes.
    if let Some(name) = state.pending.as_deref().filter(|n| n.len() <= PENDING_MAX) {
        out[at] = u8::try_from(name.len()).unwrap_or(0);
        out[at + 1..at + 1 + name.len()].copy_from_slice(name.as_bytes());
    }
    let sum = checksum(&out[..LEN - 8]);
    out[LEN - 8..].copy_from_slice(&sum.to_le_bytes());
    out
}

/// The state in `bytes`, if they are a whole ledger of this version.
pub(crate) fn decode(bytes: &[u8]) -> Option<State> {
    if bytes.len() != LEN || &bytes[..8] != MAGIC {
        return None;
    }
    let sum = u64::from_le_bytes(bytes[LEN - 8..].try_into().ok()?);
    if checksum(&bytes[..LEN - 8]) != sum {
        return None;
    }
    let number = |i: usize| -> Option<u64> {
        Some(u64::from_le_bytes(
            bytes[8 + i * 8..16 + i * 8].try_into().ok()?,
        ))
    };
    let at = 8 + 5 * 8;
    let pending_len = usize::from(bytes[at]);
    let pending = match pending_len {
        0 => None,
        n if n <= PENDING_MAX => Some(
            std::str::from_utf8(&bytes[at + 1..at + 1 + n])
                .ok()?
                .to_owned(),
        ),
        _ => return None,
    };
    Some(State {
        counts: Counts {
            entries: number(0)?,
            bytes: number(1)?,
        },
        snapshot: number(2)?,
        snapshot_len: number(3)?,
        cursor: number(4)?,
        pending,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> State {
        State {
            counts: Counts {
                entries: 10_000,
                bytes: 1 << 30,
            },
            snapshot: 7,
            snapshot_len: 9_999,
            cursor: 12,
            pending: Some(format!("{}.tmp.abcdefghij", "a".repeat(64))),
        }
    }

    #[test]
    fn round_trips() {
        assert_eq!(decode(&encode(&sample())), Some(sample()));
        assert_eq!(decode(&encode(&State::default())), Some(State::default()));
    }

    #[test]
    fn torn_or_foreign_bytes_do_not_decode() {
        let bytes = encode(&sample());
        assert_eq!(decode(&bytes[..LEN - 1]), None);
        assert_eq!(decode(&[]), None);
        let mut flipped = bytes;
        flipped[9] ^= 1;
        assert_eq!(decode(&flipped), None);
        let mut longer = bytes.to_vec();
        longer.push(0);
        assert_eq!(decode(&longer), None);
    }

    #[test]
    fn the_lock_is_exclusive_between_handles() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::sync::Arc::new(Dir::open_path(dir.path()).unwrap());
        let mut first = Ledger::lock(&root).unwrap();
        assert_eq!(first.read().unwrap(), None, "a new ledger is empty");
        first.write(&sample()).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let shared = std::sync::Arc::clone(&root);
        let waiter = std::thread::spawn(move || {
            let mut second = Ledger::lock(&shared).unwrap();
            tx.send(second.read().unwrap()).unwrap();
        });
        // The waiter cannot read before the first handle lets go.
        assert!(rx.try_recv().is_err());
        let mut changed = sample();
        changed.cursor = 13;
        first.write(&changed).unwrap();
        drop(first);
        assert_eq!(rx.recv().unwrap(), Some(changed));
        waiter.join().unwrap();
    }
}
