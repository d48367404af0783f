//! The LRU snapshot: every entry of the directory as one rescan saw it, oldest
//! first (`last_accessed_at`, then key: FR-WF-CCH-LRU-01 items 3 and 4), in
//! `.webfetch-lru`, fixed-width records so that record `i` is one positioned read.
//!
//! Eviction walks it with the ledger's cursor ([`super::ledger`]). The snapshot is
//! written once per rescan and never changed, so it needs no lock of its own; a
//! rescan happens only when the cursor reaches its end, which takes at least as
//! many evictions or skips as there were entries: the O(n) rescan is paid once per
//! n steps, and a write costs O(1) on average.
//!
//! Why walking a snapshot is still LRU: an entry written or used after the rescan
//! got `last_accessed_at = now`, later than everything the snapshot holds, so the
//! first snapshot record whose file is unchanged is the least recently used entry.
//! A record whose file was used since (newer mtime) is skipped; a vanished one too.

use std::fs::File;
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};

use super::dir::Dir;
use super::key::CacheKey;
use super::store::Seen;
use crate::vocabulary::Timestamp;

/// The snapshot's file name in the cache directory.
pub(crate) const SNAPSHOT_NAME: &str = ".webfetch-lru";
/// Prefix of the snapshot's temp files (removed by the next rescan if a writer died).
pub(crate) const SNAPSHOT_TEMP_PREFIX: &str = ".webfetch-lru.tmp.";

const MAGIC: &[u8; 8] = b"WFLRU001";
const HEADER: u64 = 16;
const RECORD: usize = 8 + 8 + 32;

/// Sorts `seen` oldest first, ties by key (FR-WF-CCH-LRU-01).
pub(crate) fn lru_order(seen: &mut [Seen]) {
    seen.sort_unstable_by_key(|s| (s.last_accessed, s.key));
}

/// Writes `records` (already in LRU order) as snapshot `generation` of the cache
/// directory `root`, atomically.
pub(crate) fn write(root: &Dir, generation: u64, records: &[Seen]) -> io::Result<()> {
    let (temp, file) = root.create_temp(SNAPSHOT_TEMP_PREFIX)?;
    let written =
        write_records(file, generation, records).and_then(|()| root.rename(&temp, SNAPSHOT_NAME));
    if written.is_err() {
        let _ = root.remove(&temp);
    }
    written
}

fn write_records(file: File, generation: u64, records: &[Seen]) -> io::Result<()> {
    let mut out = BufWriter::new(file);
    out.write_all(MAGIC)?;
    out.write_all(&generation.to_le_bytes())?;
    for record in records {
        out.write_all(&encode(record))?;
    }
    out.flush()
}

fn encode(record: &Seen) -> [u8; RECORD] {
    let mut out = [0u8; RECORD];
    out[..8].copy_from_slice(&record.last_accessed.unix_seconds().to_le_bytes());
    out[8..16].copy_from_slice(&record.size.to_le_bytes());
    out[16..].copy_from_slice(record.key.as_bytes());
    out
}

fn decode(bytes: &[u8; RECORD]) -> Seen {
    let mut seconds = [0u8; 8];
    seconds.copy_from_slice(&bytes[..8]);
    let mut size = [0u8; 8];
    size.copy_from_slice(&bytes[8..16]);
    let mut key = [0u8; 32];
    key.copy_from_slice(&bytes[16..]);
    Seen {
        key: CacheKey::from_bytes(key),
        last_accessed: Timestamp::saturating_from_unix_seconds(i64::from_le_bytes(seconds)),
        size: u64::from_le_bytes(size),
    }
}

/// An open snapshot of a known generation.
pub(crate) struct Snapshot {
    file: File,
}

impl Snapshot {
    /// Opens snapshot `generation` of `root`; `None` if it is missing or another one
    /// (a writer died between writing it and the ledger): the caller rescans.
    pub(crate) fn open(root: &Dir, generation: u64) -> io::Result<Option<Snapshot>> {
        let mut file = match root.open_read(SNAPSHOT_NAME) {
            Ok((_, status)) if !status.is_file() => return Ok(None),
            Ok((file, _)) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let mut header = [0u8; 16];
        match file.read_exact(&mut header) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
            Err(e) => return Err(e),
        }
        let same = &header[..8] == MAGIC && header[8..] == generation.to_le_bytes();
        Ok(same.then_some(Snapshot { file }))
    }

    /// Record `index`, or `None` past the end.
    pub(crate) fn record(&mut self, index: u64) -> io::Result<Option<Seen>> {
        let offset = u64::try_from(RECORD)
            .ok()
            .and_then(|len| index.checked_mul(len))
            .and_then(|at| at.checked_add(HEADER));
        let Some(offset) = offset else {
            return Ok(None);
        };
        self.file.seek(SeekFrom::Start(offset))?;
        let mut bytes = [0u8; RECORD];
        match self.file.read_exact(&mut bytes) {
            Ok(()) => Ok(Some(decode(&bytes))),
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(None),
            Err(e) => Err(e),
        }
    }
}

/// Removes snapshot temp files left in `dir` by a writer that died. Called under
/// the ledger lock, so no live writer owns one.
pub(crate) fn remove_stray_temps(root: &Dir) {
    let Ok(names) = root.names() else {
        return;
    };
    for name in names {
        if name.starts_with(SNAPSHOT_TEMP_PREFIX) {
            let _ = root.remove(&name);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::Variant;
    use crate::vocabulary::RenderingMethod;

    fn seen(n: u32, at: i64, size: u64) -> Seen {
        Seen {
            key: CacheKey::from_parts(
                &format!("https://example.com/{n}"),
                RenderingMethod::Http,
                Variant::default(),
            ),
            last_accessed: Timestamp::from_unix_seconds(at).unwrap(),
            size,
        }
    }

    #[test]
    fn records_read_back_by_index_in_lru_order() {
        let dir = tempfile::tempdir().unwrap();
        let root = Dir::open_path(dir.path()).unwrap();
        let mut records = vec![
            seen(1, 30, 10),
            seen(2, 10, 20),
            seen(3, 10, 30),
            seen(4, -5, 1),
        ];
        lru_order(&mut records);
        assert_eq!(records[0], seen(4, -5, 1));
        assert!(records[1].key < records[2].key, "ties by key");
        write(&root, 42, &records).unwrap();
        let mut snapshot = Snapshot::open(&root, 42).unwrap().unwrap();
        for (i, record) in records.iter().enumerate() {
            assert_eq!(snapshot.record(i as u64).unwrap(), Some(*record));
        }
        assert_eq!(snapshot.record(4).unwrap(), None);
        assert_eq!(snapshot.record(u64::MAX).unwrap(), None);
        assert!(
            Snapshot::open(&root, 41).unwrap().is_none(),
            "other generation"
        );
    }

    #[test]
    fn missing_snapshot_and_stray_temps() {
        let dir = tempfile::tempdir().unwrap();
        let root = Dir::open_path(dir.path()).unwrap();
        assert!(Snapshot::open(&root, 1).unwrap().is_none());
        let stray = dir.path().join(format!("{SNAPSHOT_TEMP_PREFIX}abc"));
        std::fs::write(&stray, b"half").unwrap();
        remove_stray_temps(&root);
        assert!(!stray.exists());
    }
}
