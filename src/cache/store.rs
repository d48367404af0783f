//! File operations of the cache: capped reads, atomic writes, careful deletes and
//! the directory scan (FR-WF-16a, 16g, FR-WF-CCH-READ-02, FR-WF-CCH-SIZE-02).
//!
//! Invariants every function keeps, so that any number of processes may share one
//! directory without locks:
//!
//! * an entry path only ever changes by `rename` of a complete file, so a reader
//!   sees a whole old entry or a whole new one, never a partial one;
//! * the file's mtime is set to its `last_accessed_at` *before* the rename, so
//!   a scan reads LRU order from metadata alone, without opening any entry;
//! * a file is deleted as garbage only if it is the very file that was read
//!   ([`remove_if_same`]), so a fresh entry renamed in meanwhile survives.
//!
//! No `fsync`: this is a cache. After a power loss an entry may be empty or torn;
//! the next read finds it unparsable, treats it as a miss and deletes it.

use std::fs::{self, File, Metadata};
use std::io::{self, Read, Write};
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::key::CacheKey;
use crate::output::Timestamp;

/// Marks temp files: `{keyhex}.tmp.{random}` (FR-WF-16g item 1).
const TEMP_INFIX: &str = ".tmp.";

/// A temp file untouched this long belongs to a writer that died; scans remove it.
/// Live writers keep a temp file for milliseconds.
const STALE_TEMP_AGE: Duration = Duration::from_secs(3600);

/// Identifies the file behind a path at one moment, to tell "the file I read" from
/// "a file someone renamed there since".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileId {
    #[cfg(unix)]
    dev: u64,
    #[cfg(unix)]
    ino: u64,
    #[cfg(not(unix))]
    len: u64,
    #[cfg(not(unix))]
    modified: Option<SystemTime>,
}

impl FileId {
    fn of(meta: &Metadata) -> FileId {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            FileId {
                dev: meta.dev(),
                ino: meta.ino(),
            }
        }
        #[cfg(not(unix))]
        {
            FileId {
                len: meta.len(),
                modified: meta.modified().ok(),
            }
        }
    }
}

/// The outcome of reading one entry file.
#[derive(Debug)]
pub(crate) enum ReadOutcome {
    /// No file: an ordinary miss.
    Missing,
    /// The bytes of the file, and which file it was.
    Bytes(Vec<u8>, FileId),
    /// Not a regular file, or larger than any entry we could have written.
    Unusable(&'static str, Option<FileId>),
    /// An I/O error other than "not found".
    Failed(io::Error),
}

/// Reads the entry at `path`, holding at most `cap` bytes in memory: an entry
/// larger than `max_cache_bytes` was never written by us (FR-WF-CCH-SIZE-01).
pub(crate) fn read_capped(path: &Path, cap: u64) -> ReadOutcome {
    // Checked before `open`: opening a FIFO planted in the directory would block.
    match fs::metadata(path) {
        Ok(meta) if !meta.is_file() => return ReadOutcome::Unusable("not a regular file", None),
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => return ReadOutcome::Missing,
        Err(e) => return ReadOutcome::Failed(e),
    }
    let mut file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return ReadOutcome::Missing,
        Err(e) => return ReadOutcome::Failed(e),
    };
    let meta = match file.metadata() {
        Ok(meta) => meta,
        Err(e) => return ReadOutcome::Failed(e),
    };
    let id = FileId::of(&meta);
    if !meta.is_file() {
        return ReadOutcome::Unusable("not a regular file", Some(id));
    }
    if meta.len() > cap {
        return ReadOutcome::Unusable("larger than max_cache_bytes", Some(id));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    match (&mut file)
        .take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
    {
        Ok(_) if u64::try_from(bytes.len()).unwrap_or(u64::MAX) > cap => {
            ReadOutcome::Unusable("larger than max_cache_bytes", Some(id))
        }
        Ok(_) => ReadOutcome::Bytes(bytes, id),
        Err(e) => ReadOutcome::Failed(e),
    }
}

/// The identity of the file now at `path`, if any.
pub(crate) fn file_id(path: &Path) -> Option<FileId> {
    fs::symlink_metadata(path).ok().map(|m| FileId::of(&m))
}

/// Writes `bytes` as the entry of `key` atomically (FR-WF-16g): [`TempEntry::begin`]
/// then [`TempEntry::finish`]. Returns the on-disk size (FR-WF-CCH-SIZE-02).
pub(crate) fn write_atomic(
    dir: &Path,
    key: &CacheKey,
    bytes: &[u8],
    last_accessed: Timestamp,
) -> io::Result<u64> {
    TempEntry::begin(dir, key)?.finish(bytes, last_accessed)
}

/// An entry being written: its temp file `{keyhex}.tmp.{random}` in the entry's own
/// shard (FR-WF-16g item 1). Dropped unfinished, the temp file is deleted; a writer
/// killed before `finish` leaves it, and the ledger names it for the next writer
/// to delete ([`remove_pending`]).
pub(crate) struct TempEntry {
    temp: tempfile::NamedTempFile,
    final_path: std::path::PathBuf,
}

impl TempEntry {
    /// Creates the (empty) temp file of `key`, and its shard if needed (also
    /// recreating `dir` if someone cleared the cache by hand, FR-WF-17b).
    pub(crate) fn begin(dir: &Path, key: &CacheKey) -> io::Result<TempEntry> {
        let final_path = key.entry_path(dir);
        let shard = final_path
            .parent()
            .map_or_else(|| dir.to_path_buf(), Path::to_path_buf);
        let prefix = format!("{key}{TEMP_INFIX}");
        let mut builder = tempfile::Builder::new();
        builder.prefix(&prefix).rand_bytes(10);
        // The shard usually exists; creating it only on demand saves a failing
        // `mkdir` per write.
        let temp = match builder.tempfile_in(&shard) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                fs::create_dir_all(&shard)?;
                builder.tempfile_in(&shard)?
            }
            created => created?,
        };
        Ok(TempEntry { temp, final_path })
    }

    /// The temp file's name within its shard.
    pub(crate) fn name(&self) -> String {
        self.temp
            .path()
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    /// Writes `bytes`, sets the mtime to `last_accessed`, then renames onto the
    /// entry's path; if the rename fails, copies (FR-WF-16g items 2 and 3). Returns
    /// the on-disk size.
    pub(crate) fn finish(mut self, bytes: &[u8], last_accessed: Timestamp) -> io::Result<u64> {
        self.temp.write_all(bytes)?;
        #[cfg(debug_assertions)]
        fault::kill_if_asked(&self.temp, bytes);
        // Best effort: an mtime that cannot be set only makes a later scan's LRU
        // order approximate; the entry itself is still right.
        if let Some(at) = system_time(last_accessed) {
            let _ = self.temp.as_file().set_modified(at);
        }
        let size = self.temp.as_file().metadata()?.len();
        match self.temp.persist(&self.final_path) {
            Ok(_) => Ok(size),
            Err(failed) => {
                // FR-WF-16g item 3. Not atomic, hence only the fallback: a reader
                // that catches a half-copied file treats it as a miss.
                fs::copy(failed.file.path(), &self.final_path)?;
                Ok(size)
            }
        }
    }
}

/// Deletes the temp file `name` (as recorded in the ledger) from its shard under
/// `dir`: the leftover of a writer that died mid-write. Names that are not ours
/// are ignored.
pub(crate) fn remove_pending(dir: &Path, name: &str) {
    if !is_temp_name(name) || name.contains(['/', '\\']) {
        return;
    }
    let shard = &name[..2];
    let _ = fs::remove_file(dir.join(shard).join(name));
}

/// A debug-build hook for the fault tests: with `WEBFETCH_FAULT=kill-mid-cache-write`
/// the process SIGKILLs itself with half an entry in its temp file, exactly what a
/// writer killed mid-write leaves behind. Compiled out of release builds.
#[cfg(debug_assertions)]
mod fault {
    use std::io::Write;

    pub(super) fn kill_if_asked(temp: &tempfile::NamedTempFile, bytes: &[u8]) {
        if std::env::var("WEBFETCH_FAULT").as_deref() != Ok("kill-mid-cache-write") {
            return;
        }
        let mut file = temp.as_file();
        let _ = file.set_len(0);
        let _ = file.write_all(&bytes[..bytes.len() / 2]);
        #[cfg(unix)]
        let _ = nix::sys::signal::raise(nix::sys::signal::Signal::SIGKILL);
        std::process::abort();
    }
}

/// Deletes the file at `path` only if it is still the file identified by `read`
/// (FR-WF-CCH-READ-02 without the race): the path is first renamed to a temp name,
/// which takes whatever file is there atomically; if that turns out to be a newer
/// file, it is linked back unless an even newer one took its place meanwhile.
///
/// Returns the size of the file it removed, if it removed one.
pub(crate) fn remove_if_same(path: &Path, key: &CacheKey, read: Option<FileId>) -> Option<u64> {
    let Some(read) = read else {
        let size = fs::symlink_metadata(path).ok()?.len();
        return fs::remove_file(path).ok().map(|()| size);
    };
    let shard = path.parent()?;
    let quarantine = tempfile::Builder::new()
        .prefix(&format!("{key}{TEMP_INFIX}"))
        .rand_bytes(10)
        .tempfile_in(shard)
        .ok()?
        .into_temp_path();
    if fs::rename(path, &quarantine).is_err() {
        // Gone already, or a platform that cannot rename over an open file: fall
        // back to check-then-delete, whose window is a few microseconds.
        let meta = fs::symlink_metadata(path).ok()?;
        if FileId::of(&meta) == read {
            return fs::remove_file(path).ok().map(|()| meta.len());
        }
        return None;
    }
    let meta = fs::symlink_metadata(&quarantine).ok()?;
    let removed = if FileId::of(&meta) == read {
        Some(meta.len())
    } else {
        // A writer replaced the garbage between our read and our rename: put its
        // entry back. `hard_link` refuses to overwrite, so a yet newer entry wins.
        if fs::hard_link(&quarantine, path).is_err() && file_id(path).is_none() {
            let _ = fs::rename(&quarantine, path);
        }
        None
    };
    // Dropping the temp path deletes whatever is still under the quarantine name.
    drop(quarantine);
    removed
}

/// What a scan or a victim check sees of an entry file: metadata only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Seen {
    pub(crate) key: CacheKey,
    pub(crate) last_accessed: Timestamp,
    pub(crate) size: u64,
}

/// The entry file of `key` as it is now, or `None` if it is gone.
pub(crate) fn stat_entry(dir: &Path, key: &CacheKey) -> io::Result<Option<Seen>> {
    match fs::symlink_metadata(key.entry_path(dir)) {
        Ok(meta) => Ok(Some(seen(*key, &meta))),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Lists every entry under `dir` from directory listings and file metadata, without
/// reading any entry (the index build). Foreign names are ignored; temp files of
/// writers that died long ago are removed. A missing `dir` is an empty cache.
pub(crate) fn scan(dir: &Path) -> io::Result<Vec<Seen>> {
    let shards = match fs::read_dir(dir) {
        Ok(shards) => shards,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut found = Vec::new();
    for shard in shards.flatten() {
        let shard_name = shard.file_name();
        let Some(shard_name) = shard_name.to_str() else {
            continue;
        };
        let is_shard = shard_name.len() == 2
            && shard_name
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        if !is_shard || !shard.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        // A shard removed by another hand between listing and reading is empty.
        let Ok(files) = fs::read_dir(shard.path()) else {
            continue;
        };
        for file in files.flatten() {
            let name = file.file_name();
            let Some(name) = name.to_str() else { continue };
            if let Some(key) = name.strip_suffix(".json").and_then(CacheKey::from_hex) {
                if !name.starts_with(shard_name) {
                    continue;
                }
                match file.metadata() {
                    Ok(meta) if meta.is_file() => found.push(seen(key, &meta)),
                    _ => continue,
                }
            } else if is_temp_name(name) {
                remove_if_stale(&file.path());
            }
        }
    }
    Ok(found)
}

fn is_temp_name(name: &str) -> bool {
    name.get(..64).and_then(CacheKey::from_hex).is_some()
        && name
            .get(64..)
            .is_some_and(|rest| rest.starts_with(TEMP_INFIX))
}

/// Removes a temp file whose last inode change is older than [`STALE_TEMP_AGE`].
/// The change time (not mtime, which writers set to the entry's
/// `last_accessed_at`) says when a writer last touched it.
fn remove_if_stale(path: &Path) {
    let Ok(meta) = fs::symlink_metadata(path) else {
        return;
    };
    let Some(changed) = changed_at(&meta) else {
        return;
    };
    if SystemTime::now()
        .duration_since(changed)
        .is_ok_and(|age| age > STALE_TEMP_AGE)
    {
        let _ = fs::remove_file(path);
    }
}

#[cfg(unix)]
fn changed_at(meta: &Metadata) -> Option<SystemTime> {
    use std::os::unix::fs::MetadataExt;
    let seconds = u64::try_from(meta.ctime()).ok()?;
    UNIX_EPOCH.checked_add(Duration::from_secs(seconds))
}

#[cfg(not(unix))]
fn changed_at(meta: &Metadata) -> Option<SystemTime> {
    meta.modified().ok()
}

fn seen(key: CacheKey, meta: &Metadata) -> Seen {
    Seen {
        key,
        last_accessed: meta
            .modified()
            .map_or(Timestamp::saturating_from_unix_seconds(0), stamp_of),
        size: meta.len(),
    }
}

/// An mtime as `last_accessed_at`, whole seconds, clamped to years 0000..=9999
/// (an mtime can be anything, including before 1970 or far in the future).
fn stamp_of(at: SystemTime) -> Timestamp {
    let seconds = match at.duration_since(UNIX_EPOCH) {
        Ok(after) => i64::try_from(after.as_secs()).unwrap_or(i64::MAX),
        Err(before) => -i64::try_from(before.duration().as_secs()).unwrap_or(i64::MAX),
    };
    Timestamp::saturating_from_unix_seconds(seconds)
}

fn system_time(at: Timestamp) -> Option<SystemTime> {
    let seconds = at.unix_seconds();
    match u64::try_from(seconds) {
        Ok(after) => UNIX_EPOCH.checked_add(Duration::from_secs(after)),
        Err(_) => UNIX_EPOCH.checked_sub(Duration::from_secs(seconds.unsigned_abs())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::RenderingMethod;

    fn key(n: u32) -> CacheKey {
        CacheKey::from_parts(&format!("https://example.com/{n}"), RenderingMethod::Http)
    }

    #[test]
    fn write_sets_mtime_and_scan_reads_it_back() {
        let dir = tempfile::tempdir().unwrap();
        let at = Timestamp::parse("2026-01-10T12:00:00Z").unwrap();
        let size = write_atomic(dir.path(), &key(1), b"{}", at).unwrap();
        assert_eq!(size, 2);
        let found = scan(dir.path()).unwrap();
        assert_eq!(
            found,
            vec![Seen {
                key: key(1),
                last_accessed: at,
                size: 2
            }]
        );
        assert_eq!(stat_entry(dir.path(), &key(1)).unwrap(), Some(found[0]));
        assert_eq!(stat_entry(dir.path(), &key(2)).unwrap(), None);
    }

    #[test]
    fn scan_ignores_foreign_names_and_keeps_fresh_temp_files() {
        let dir = tempfile::tempdir().unwrap();
        let k = key(7);
        let shard = dir.path().join(k.shard());
        fs::create_dir_all(&shard).unwrap();
        fs::write(shard.join("notes.txt"), "x").unwrap();
        fs::write(
            shard.join(format!("{}.json", k.to_hex().to_uppercase())),
            "x",
        )
        .unwrap();
        fs::write(dir.path().join("zz.json"), "x").unwrap();
        let fresh_temp = shard.join(format!("{k}.tmp.abc"));
        fs::write(&fresh_temp, "partial").unwrap();
        // An entry in the wrong shard is not ours either.
        let other = if k.shard() == "00" { "01" } else { "00" };
        fs::create_dir_all(dir.path().join(other)).unwrap();
        fs::write(dir.path().join(other).join(format!("{k}.json")), "x").unwrap();
        assert_eq!(scan(dir.path()).unwrap(), vec![]);
        assert!(
            fresh_temp.exists(),
            "a live writer's temp file is left alone"
        );
        assert!(is_temp_name(&format!("{k}.tmp.abc")));
        assert!(!is_temp_name(&format!("{k}.json")));
    }

    #[test]
    fn scan_of_a_missing_dir_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(scan(&dir.path().join("absent")).unwrap(), vec![]);
    }

    #[test]
    fn remove_if_same_spares_a_file_renamed_in_after_the_read() {
        let dir = tempfile::tempdir().unwrap();
        let k = key(3);
        let at = Timestamp::from_unix_seconds(1_000).unwrap();
        write_atomic(dir.path(), &k, b"garbage", at).unwrap();
        let path = k.entry_path(dir.path());
        let ReadOutcome::Bytes(_, garbage_id) = read_capped(&path, 1 << 20) else {
            panic!("expected bytes");
        };
        // A writer replaces the file before the reader deletes "its" garbage.
        write_atomic(dir.path(), &k, b"fresh", at).unwrap();
        remove_if_same(&path, &k, Some(garbage_id));
        assert_eq!(fs::read(&path).unwrap(), b"fresh");
        // The file actually read is deleted.
        let ReadOutcome::Bytes(_, fresh_id) = read_capped(&path, 1 << 20) else {
            panic!("expected bytes");
        };
        remove_if_same(&path, &k, Some(fresh_id));
        assert!(!path.exists());
        let leftovers: Vec<_> = fs::read_dir(path.parent().unwrap()).unwrap().collect();
        assert!(leftovers.is_empty(), "no quarantine file left");
    }

    #[test]
    fn reads_are_capped_and_refuse_non_files() {
        let dir = tempfile::tempdir().unwrap();
        let k = key(4);
        write_atomic(
            dir.path(),
            &k,
            &[b'x'; 100],
            Timestamp::saturating_from_unix_seconds(0),
        )
        .unwrap();
        let path = k.entry_path(dir.path());
        assert!(matches!(
            read_capped(&path, 99),
            ReadOutcome::Unusable(_, Some(_))
        ));
        assert!(matches!(read_capped(&path, 100), ReadOutcome::Bytes(b, _) if b.len() == 100));
        assert!(matches!(
            read_capped(&dir.path().join("nope"), 100),
            ReadOutcome::Missing
        ));
        assert!(matches!(
            read_capped(dir.path(), 100),
            ReadOutcome::Unusable(_, None)
        ));
    }

    #[test]
    fn stamps_convert_to_and_from_system_time() {
        for s in [0, 1, 1_767_225_600, -86_400] {
            let stamp = Timestamp::from_unix_seconds(s).unwrap();
            assert_eq!(system_time(stamp).map(stamp_of), Some(stamp));
        }
        // Out-of-range mtimes clamp, keeping their place in LRU order.
        if let Some(far) = UNIX_EPOCH.checked_add(Duration::from_secs(400_000_000_000)) {
            assert_eq!(stamp_of(far).to_string(), "9999-12-31T23:59:59Z");
        }
        if let Some(ancient) = UNIX_EPOCH.checked_sub(Duration::from_secs(70_000_000_000)) {
            assert_eq!(stamp_of(ancient).to_string(), "0000-01-01T00:00:00Z");
        }
    }
}
