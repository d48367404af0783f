//! File operations of the cache: capped reads, atomic writes, careful deletes and
//! the directory scan (FR-WF-16a, 16g, FR-WF-CCH-READ-02, FR-WF-CCH-SIZE-02).
//!
//! Every operation goes through the checked handle of the cache directory and of
//! the entry's shard ([`super::dir`]): a shard that is not a real directory of
//! ours is neither read nor written, and no file is opened through a link.
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

use std::fs::File;
use std::io::{self, Read, Write};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::dir::{Dir, FileId, Refused, Status};
use super::key::CacheKey;
use crate::vocabulary::Timestamp;

/// Marks temp files: `{keyhex}.tmp.{random}` (FR-WF-16g item 1).
const TEMP_INFIX: &str = ".tmp.";

/// A temp file untouched this long belongs to a writer that died; scans remove it.
/// Live writers keep a temp file for milliseconds.
const STALE_TEMP_AGE: Duration = Duration::from_secs(3600);

/// The outcome of reading one entry file.
#[derive(Debug)]
pub(crate) enum ReadOutcome {
    /// No file: an ordinary miss.
    Missing,
    /// The bytes of the file, and which file it was.
    Bytes(Vec<u8>, FileId),
    /// Not a regular file, or larger than any entry we could have written: to be
    /// deleted.
    Unusable(&'static str, Option<FileId>),
    /// The shard is not a directory the cache trusts: a miss, and nothing in it
    /// is touched.
    Untrusted(Refused),
    /// An I/O error other than "not found".
    Failed(io::Error),
}

/// Reads the entry of `key`, holding at most `cap` bytes in memory: an entry
/// larger than `max_cache_bytes` was never written by us (FR-WF-CCH-SIZE-01).
pub(crate) fn read_capped(root: &Dir, key: &CacheKey, cap: u64) -> ReadOutcome {
    let shard = match root.subdir(&key.shard(), false) {
        Ok(Some(shard)) => shard,
        Ok(None) => return ReadOutcome::Missing,
        Err(refused) => return ReadOutcome::Untrusted(refused),
    };
    // Non-blocking and without following links: a FIFO or link planted in the
    // shard opens (or fails) at once, and is then refused.
    let (mut file, status) = match shard.open_read(&key.file_name()) {
        Ok(opened) => opened,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return ReadOutcome::Missing,
        Err(_) if is_link(&shard, &key.file_name()) => {
            return ReadOutcome::Unusable("a symbolic link", None);
        }
        Err(e) => return ReadOutcome::Failed(e),
    };
    if !status.is_file() {
        return ReadOutcome::Unusable("not a regular file", Some(status.id));
    }
    if status.size > cap {
        return ReadOutcome::Unusable("larger than max_cache_bytes", Some(status.id));
    }
    read_at_most(&mut file, cap, status)
}

fn read_at_most(file: &mut File, cap: u64, status: Status) -> ReadOutcome {
    let mut bytes = Vec::with_capacity(usize::try_from(status.size).unwrap_or(0));
    match file.take(cap.saturating_add(1)).read_to_end(&mut bytes) {
        Ok(_) if u64::try_from(bytes.len()).unwrap_or(u64::MAX) > cap => {
            ReadOutcome::Unusable("larger than max_cache_bytes", Some(status.id))
        }
        Ok(_) => ReadOutcome::Bytes(bytes, status.id),
        Err(e) => ReadOutcome::Failed(e),
    }
}

fn is_link(dir: &Dir, name: &str) -> bool {
    dir.stat(name)
        .ok()
        .flatten()
        .is_some_and(|s| s.kind == rustix::fs::FileType::Symlink)
}

/// The identity of the entry file of `key` now, if any.
pub(crate) fn file_id(root: &Dir, key: &CacheKey) -> Option<FileId> {
    let shard = root.subdir(&key.shard(), false).ok()??;
    shard.stat(&key.file_name()).ok()?.map(|s| s.id)
}

/// Writes `bytes` as the entry of `key` atomically (FR-WF-16g): [`TempEntry::begin`]
/// then [`TempEntry::finish`]. Returns the on-disk size (FR-WF-CCH-SIZE-02).
pub(crate) fn write_atomic(
    root: &Dir,
    key: &CacheKey,
    bytes: &[u8],
    last_accessed: Timestamp,
) -> io::Result<u64> {
    TempEntry::begin(root, key)?.finish(bytes, last_accessed)
}

/// An entry being written: its temp file `{keyhex}.tmp.{random}` in the entry's own
/// shard (FR-WF-16g item 1). Dropped unfinished, the temp file is deleted; a writer
/// killed before `finish` leaves it, and the ledger names it for the next writer
/// to delete ([`remove_pending`]).
pub(crate) struct TempEntry {
    shard: Dir,
    name: String,
    file: File,
    final_name: String,
    done: bool,
}

impl TempEntry {
    /// Creates the (empty) temp file of `key`, and its shard if needed, mode 0700.
    pub(crate) fn begin(root: &Dir, key: &CacheKey) -> io::Result<TempEntry> {
        let shard = root
            .subdir(&key.shard(), true)
            .map_err(refused_io)?
            .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?;
        let (name, file) = shard.create_temp(&format!("{key}{TEMP_INFIX}"))?;
        Ok(TempEntry {
            shard,
            name,
            file,
            final_name: key.file_name(),
            done: false,
        })
    }

    /// The temp file's name within its shard.
    pub(crate) fn name(&self) -> String {
        self.name.clone()
    }

    /// Writes `bytes`, sets the mtime to `last_accessed`, then renames onto the
    /// entry's name; if the rename fails, writes the entry in place (FR-WF-16g
    /// items 2 and 3). Returns the on-disk size.
    pub(crate) fn finish(mut self, bytes: &[u8], last_accessed: Timestamp) -> io::Result<u64> {
        self.file.write_all(bytes)?;
        #[cfg(debug_assertions)]
        fault::kill_if_asked(&self.file, bytes);
        // Best effort: an mtime that cannot be set only makes a later scan's LRU
        // order approximate; the entry itself is still right.
        if let Some(at) = system_time(last_accessed) {
            let _ = self.file.set_modified(at);
        }
        let size = self.file.metadata()?.len();
        if self.shard.rename(&self.name, &self.final_name).is_ok() {
            self.done = true;
            return Ok(size);
        }
        // FR-WF-16g item 3. Not atomic, hence only the fallback: a reader that
        // catches a half-written file treats it as a miss.
        self.shard.overwrite(&self.final_name, bytes)?;
        Ok(size)
    }
}

impl Drop for TempEntry {
    fn drop(&mut self) {
        if !self.done {
            let _ = self.shard.remove(&self.name);
        }
    }
}

/// An untrusted shard as the I/O error of the write that needed it.
fn refused_io(refused: Refused) -> io::Error {
    match refused {
        Refused::Io(e) => e,
        other => io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("shard not trusted: {other}"),
        ),
    }
}

/// Deletes the temp file `name` (as recorded in the ledger) from its shard: the
/// leftover of a writer that died mid-write. Names that are not ours are ignored.
pub(crate) fn remove_pending(root: &Dir, name: &str) {
    if !is_temp_name(name) {
        return;
    }
    if let Ok(Some(shard)) = root.subdir(&name[..2], false) {
        let _ = shard.remove(name);
    }
}

/// A debug-build hook for the fault tests: with `WEBFETCH_FAULT=kill-mid-cache-write`
/// the process SIGKILLs itself with half an entry in its temp file, exactly what a
/// writer killed mid-write leaves behind. Compiled out of release builds.
#[cfg(debug_assertions)]
mod fault {
    use std::fs::File;
    use std::io::Write;

    pub(super) fn kill_if_asked(mut file: &File, bytes: &[u8]) {
        if std::env::var("WEBFETCH_FAULT").as_deref() != Ok("kill-mid-cache-write") {
            return;
        }
        let _ = file.set_len(0);
        let _ = file.write_all(&bytes[..bytes.len() / 2]);
        let _ = nix::sys::signal::raise(nix::sys::signal::Signal::SIGKILL);
        std::process::abort();
    }
}

/// Deletes whatever is at the entry name of `key` (a link is removed, never
/// followed). Returns the size of what it removed, `None` if nothing was there.
pub(crate) fn remove_entry(root: &Dir, key: &CacheKey) -> io::Result<Option<u64>> {
    let shard = match root.subdir(&key.shard(), false) {
        Ok(Some(shard)) => shard,
        Ok(None) => return Ok(None),
        Err(refused) => return Err(refused_io(refused)),
    };
    let name = key.file_name();
    let Some(status) = shard.stat(&name)? else {
        return Ok(None);
    };
    match shard.remove(&name) {
        Ok(()) => Ok(Some(status.size)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Deletes the entry file of `key` only if it is still the file identified by
/// `read` (FR-WF-CCH-READ-02 without the race): the file is first renamed to a
/// temp name, which takes whatever file is there atomically; if that turns out to
/// be a newer file, it is linked back unless an even newer one took its place
/// meanwhile. With `read` `None` (a file that could not be identified), whatever
/// is there is removed.
///
/// Returns the size of the file it removed, if it removed one.
pub(crate) fn remove_if_same(root: &Dir, key: &CacheKey, read: Option<FileId>) -> Option<u64> {
    let Some(read) = read else {
        return remove_entry(root, key).ok().flatten();
    };
    let shard = root.subdir(&key.shard(), false).ok()??;
    let name = key.file_name();
    // A new file of ours holds the quarantine name, so the rename replaces no one
    // else's file.
    let (quarantine, _placeholder) = shard.create_temp(&format!("{key}{TEMP_INFIX}")).ok()?;
    if shard.rename(&name, &quarantine).is_err() {
        let _ = shard.remove(&quarantine);
        return None;
    }
    let removed = match shard.stat(&quarantine) {
        Ok(Some(status)) if status.id == read => Some(status.size),
        _ => {
            // A writer replaced the garbage between our read and our rename: put
            // its entry back. `link` refuses to overwrite, so a yet newer entry wins.
            if shard.link(&quarantine, &name).is_err() && !matches!(shard.stat(&name), Ok(Some(_)))
            {
                let _ = shard.rename(&quarantine, &name);
            }
            None
        }
    };
    let _ = shard.remove(&quarantine);
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
pub(crate) fn stat_entry(root: &Dir, key: &CacheKey) -> io::Result<Option<Seen>> {
    let shard = match root.subdir(&key.shard(), false) {
        Ok(Some(shard)) => shard,
        Ok(None) => return Ok(None),
        Err(refused) => return Err(refused_io(refused)),
    };
    Ok(shard
        .stat(&key.file_name())?
        .map(|status| seen(*key, &status)))
}

/// Lists every entry from directory listings and file metadata, without reading
/// any entry (the index build). Foreign names and untrusted shards are ignored;
/// temp files of writers that died long ago are removed.
pub(crate) fn scan(root: &Dir) -> io::Result<Vec<Seen>> {
    let mut found = Vec::new();
    for shard_name in root.names()? {
        let is_shard = shard_name.len() == 2
            && shard_name
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        if !is_shard {
            continue;
        }
        // Not a directory of ours, or removed by another hand since the listing.
        let Ok(Some(shard)) = root.subdir(&shard_name, false) else {
            continue;
        };
        let Ok(names) = shard.names() else {
            continue;
        };
        for name in names {
            if let Some(key) = name.strip_suffix(".json").and_then(CacheKey::from_hex) {
                if !name.starts_with(&shard_name) {
                    continue;
                }
                if let Ok(Some(status)) = shard.stat(&name)
                    && status.is_file()
                {
                    found.push(seen(key, &status));
                }
            } else if is_temp_name(&name) {
                remove_if_stale(&shard, &name);
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
fn remove_if_stale(shard: &Dir, name: &str) {
    let Ok(Some(status)) = shard.stat(name) else {
        return;
    };
    let Some(changed) = system_time_of(status.changed) else {
        return;
    };
    if SystemTime::now()
        .duration_since(changed)
        .is_ok_and(|age| age > STALE_TEMP_AGE)
    {
        let _ = shard.remove(name);
    }
}

fn seen(key: CacheKey, status: &Status) -> Seen {
    Seen {
        key,
        last_accessed: Timestamp::saturating_from_unix_seconds(status.modified),
        size: status.size,
    }
}

fn system_time(at: Timestamp) -> Option<SystemTime> {
    system_time_of(at.unix_seconds())
}

fn system_time_of(seconds: i64) -> Option<SystemTime> {
    match u64::try_from(seconds) {
        Ok(after) => UNIX_EPOCH.checked_add(Duration::from_secs(after)),
        Err(_) => UNIX_EPOCH.checked_sub(Duration::from_secs(seconds.unsigned_abs())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::Variant;
    use crate::vocabulary::RenderingMethod;
    use std::fs;
    use std::path::Path;

    fn key(n: u32) -> CacheKey {
        CacheKey::from_parts(
            &format!("https://example.com/{n}"),
            RenderingMethod::Http,
            Variant::default(),
        )
    }

    fn root(path: &Path) -> Dir {
        Dir::open_path(path).unwrap()
    }

    #[test]
    fn write_sets_mtime_and_scan_reads_it_back() {
        let dir = tempfile::tempdir().unwrap();
        let root = root(dir.path());
        let at = Timestamp::parse("2026-01-10T12:00:00Z").unwrap();
        let size = write_atomic(&root, &key(1), b"{}", at).unwrap();
        assert_eq!(size, 2);
        let found = scan(&root).unwrap();
        assert_eq!(
            found,
            vec![Seen {
                key: key(1),
                last_accessed: at,
                size: 2
            }]
        );
        assert_eq!(stat_entry(&root, &key(1)).unwrap(), Some(found[0]));
        assert_eq!(stat_entry(&root, &key(2)).unwrap(), None);
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
        assert_eq!(scan(&root(dir.path())).unwrap(), vec![]);
        assert!(
            fresh_temp.exists(),
            "a live writer's temp file is left alone"
        );
        assert!(is_temp_name(&format!("{k}.tmp.abc")));
        assert!(!is_temp_name(&format!("{k}.json")));
    }

    #[test]
    fn remove_if_same_spares_a_file_renamed_in_after_the_read() {
        let dir = tempfile::tempdir().unwrap();
        let root = root(dir.path());
        let k = key(3);
        let at = Timestamp::from_unix_seconds(1_000).unwrap();
        write_atomic(&root, &k, b"garbage", at).unwrap();
        let path = k.entry_path(dir.path());
        let ReadOutcome::Bytes(_, garbage_id) = read_capped(&root, &k, 1 << 20) else {
            panic!("expected bytes");
        };
        // A writer replaces the file before the reader deletes "its" garbage.
        write_atomic(&root, &k, b"fresh", at).unwrap();
        remove_if_same(&root, &k, Some(garbage_id));
        assert_eq!(fs::read(&path).unwrap(), b"fresh");
        // The file actually read is deleted.
        let ReadOutcome::Bytes(_, fresh_id) = read_capped(&root, &k, 1 << 20) else {
            panic!("expected bytes");
        };
        assert_eq!(remove_if_same(&root, &k, Some(fresh_id)), Some(5));
        assert!(!path.exists());
        let leftovers: Vec<_> = fs::read_dir(path.parent().unwrap()).unwrap().collect();
        assert!(leftovers.is_empty(), "no quarantine file left");
    }

    #[test]
    fn reads_are_capped_and_refuse_non_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = root(dir.path());
        let k = key(4);
        write_atomic(
            &root,
            &k,
            &[b'x'; 100],
            Timestamp::saturating_from_unix_seconds(0),
        )
        .unwrap();
        assert!(matches!(
            read_capped(&root, &k, 99),
            ReadOutcome::Unusable(_, Some(_))
        ));
        assert!(matches!(read_capped(&root, &k, 100), ReadOutcome::Bytes(b, _) if b.len() == 100));
        assert!(matches!(
            read_capped(&root, &key(5), 100),
            ReadOutcome::Missing
        ));
        let path = k.entry_path(dir.path());
        fs::remove_file(&path).unwrap();
        fs::create_dir(&path).unwrap();
        assert!(matches!(
            read_capped(&root, &k, 100),
            ReadOutcome::Unusable(_, Some(_))
        ));
    }

    #[test]
    fn links_are_neither_read_nor_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let root = root(&dir.path().join("cache"));
        let outside = dir.path().join("outside");
        fs::create_dir(&outside).unwrap();
        let at = Timestamp::saturating_from_unix_seconds(0);

        // An entry that is a link to a file outside: refused, and only the link goes.
        let k = key(8);
        let target = outside.join("planted.json");
        fs::write(&target, "{}").unwrap();
        fs::create_dir(dir.path().join("cache").join(k.shard())).unwrap();
        std::os::unix::fs::symlink(&target, k.entry_path(&dir.path().join("cache"))).unwrap();
        assert!(matches!(
            read_capped(&root, &k, 100),
            ReadOutcome::Unusable("a symbolic link", None)
        ));
        let link = fs::symlink_metadata(k.entry_path(&dir.path().join("cache"))).unwrap();
        assert_eq!(remove_if_same(&root, &k, None), Some(link.len()));
        assert!(target.exists());

        // A shard that is a link: nothing read or written through it.
        let k = key(9);
        let shard = dir.path().join("cache").join(k.shard());
        if shard.exists() {
            fs::remove_dir_all(&shard).unwrap();
        }
        std::os::unix::fs::symlink(&outside, &shard).unwrap();
        fs::write(outside.join(k.file_name()), "{}").unwrap();
        assert!(matches!(
            read_capped(&root, &k, 100),
            ReadOutcome::Untrusted(_)
        ));
        assert!(write_atomic(&root, &k, b"{}", at).is_err());
        assert!(stat_entry(&root, &k).is_err());
        assert_eq!(remove_if_same(&root, &k, None), None);
        assert_eq!(
            fs::read_dir(&outside).unwrap().count(),
            2,
            "nothing added or removed"
        );
        assert_eq!(scan(&root).unwrap(), vec![]);
    }
}
