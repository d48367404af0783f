//! The cache directory as checked handles (FR-WF-CCH-ENABLE-02).
//!
//! The SRD's default `cache_dir` is `${TEMP}/forge-webfetch` (5.3): a predictable
//! name in a world-writable directory, which another local user can create first,
//! fill with planted entries (served as fetches, before SSRF and robots.txt run,
//! as Appendix B orders) or with symbolic links (files written wherever they
//! point). So the cache trusts a directory only if it is a real directory, not a
//! symbolic link, owned by the effective user, and writable by nobody else
//! ([`Dir::check`]); the cache directory, and each shard, is checked that way, and
//! is created mode 0700.
//!
//! Every file is then reached through the handle of a checked directory (`openat`
//! and friends) with `O_NOFOLLOW`, one name at a time: a path swapped after the
//! check changes nothing, and no link is ever followed. Files inside a checked
//! directory can only have been put there by its owner (or root), so they need
//! no check of their own beyond "a regular file".
//!
//! Unix only: these are POSIX calls, through `rustix`.

use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rustix::fs::{AtFlags, CWD, FileType, Mode, OFlags};
use rustix::io::Errno;

/// Mode of the directories the cache creates: its owner's alone.
const DIR_MODE: u32 = 0o700;
/// Mode of the files the cache creates.
const FILE_MODE: u32 = 0o600;
/// Permission bits that let group or others add, remove or rename files.
const FOREIGN_WRITE: u32 = 0o022;

/// Why a directory is not trusted: the reason the warning names when caching is
/// disabled (FR-WF-CCH-ENABLE-02), or why a shard is skipped.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Refused {
    /// The path's last component is a symbolic link.
    #[error("it is a symbolic link")]
    Symlink,
    /// Something other than a directory is there.
    #[error("it is not a directory")]
    NotADirectory,
    /// Another user owns it, so they could put anything in it.
    #[error("it is owned by uid {owner}, not by this user (uid {user})")]
    Owner {
        /// The directory's owner.
        owner: u32,
        /// The effective user.
        user: u32,
    },
    /// Group or others may write to it.
    #[error("group or others can write to it (mode {mode:03o})")]
    Writable {
        /// The permission bits.
        mode: u32,
    },
    /// It could not be created, opened or inspected.
    #[error("{0}")]
    Io(#[from] io::Error),
}

/// Identifies a file at one moment, to tell "the file I read" from "a file
/// someone renamed there since".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileId {
    dev: u64,
    ino: u64,
}

/// What the cache reads of a file's metadata.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Status {
    pub(crate) kind: FileType,
    pub(crate) id: FileId,
    pub(crate) owner: u32,
    /// Permission bits.
    pub(crate) mode: u32,
    pub(crate) size: u64,
    /// mtime, whole seconds since the epoch.
    pub(crate) modified: i64,
    /// ctime, whole seconds since the epoch.
    pub(crate) changed: i64,
}

impl Status {
    // `Stat`'s field types differ between platforms (and are these very types on
    // some), so the conversions are useless on some and needed on others.
    #[allow(clippy::useless_conversion, clippy::unnecessary_cast)]
    fn of(stat: &rustix::fs::Stat) -> Status {
        Status {
            kind: FileType::from_raw_mode(stat.st_mode),
            id: FileId {
                dev: stat.st_dev as u64,
                ino: stat.st_ino as u64,
            },
            owner: stat.st_uid as u32,
            mode: Mode::from_raw_mode(stat.st_mode).bits() as u32 & 0o7777,
            size: u64::try_from(stat.st_size).unwrap_or(0),
            modified: stat.st_mtime as i64,
            changed: stat.st_ctime as i64,
        }
    }

    /// Whether this is a regular file (not a link, FIFO, device or directory).
    pub(crate) fn is_file(&self) -> bool {
        self.kind == FileType::RegularFile
    }
}

/// A directory that passed [`Dir::check`], held open: every name below is
/// resolved relative to it, never through a path.
#[derive(Debug)]
pub(crate) struct Dir {
    fd: OwnedFd,
}

impl Dir {
    /// Opens the directory at `path`, creating it and its missing parents mode
    /// 0700, and checks it. The last component must not be a symbolic link;
    /// parents may be (a home directory on another disk, macOS's `/tmp`).
    pub(crate) fn open_path(path: &Path) -> Result<Dir, Refused> {
        if let Err(error) = create_dir_all(path) {
            // Something that is not a directory is there: say what below.
            if std::fs::symlink_metadata(path).is_err() {
                return Err(Refused::Io(error));
            }
        }
        let fd = rustix::fs::openat(CWD, path, dir_flags(), Mode::empty()).map_err(|errno| {
            refusal(errno, || {
                std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
            })
        })?;
        Dir::check(fd)
    }

    /// The shard (or other subdirectory) `name`, checked like the cache directory;
    /// `None` if it does not exist and `create` is false. Created mode 0700.
    pub(crate) fn subdir(&self, name: &str, create: bool) -> Result<Option<Dir>, Refused> {
        match self.open_subdir(name) {
            Err(Refused::Io(e)) if e.kind() == io::ErrorKind::NotFound && create => {
                match rustix::fs::mkdirat(&self.fd, name, Mode::from_raw_mode(DIR_MODE)) {
                    Ok(()) | Err(Errno::EXIST) => {}
                    Err(errno) => return Err(Refused::Io(errno.into())),
                }
                self.open_subdir(name).map(Some)
            }
            Err(Refused::Io(e)) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            opened => opened.map(Some),
        }
    }

    fn open_subdir(&self, name: &str) -> Result<Dir, Refused> {
        let fd =
            rustix::fs::openat(&self.fd, name, dir_flags(), Mode::empty()).map_err(|errno| {
                refusal(errno, || {
                    self.stat(name)
                        .is_ok_and(|s| s.is_some_and(|s| s.kind == FileType::Symlink))
                })
            })?;
        Dir::check(fd)
    }

    /// Trusts `fd` only if it is a directory owned by the effective user that
    /// group and others cannot write to.
    fn check(fd: OwnedFd) -> Result<Dir, Refused> {
        let status = Status::of(&rustix::fs::fstat(&fd).map_err(io::Error::from)?);
        if status.kind != FileType::Directory {
            return Err(Refused::NotADirectory);
        }
        let user = rustix::process::geteuid().as_raw();
        if status.owner != user {
            return Err(Refused::Owner {
                owner: status.owner,
                user,
            });
        }
        if status.mode & FOREIGN_WRITE != 0 {
            return Err(Refused::Writable { mode: status.mode });
        }
        Ok(Dir { fd })
    }

    /// Opens the file `name` for reading, with its status. A symbolic link is an
    /// error (`ELOOP`); a FIFO opens without blocking, and the caller refuses
    /// anything but [`Status::is_file`].
    pub(crate) fn open_read(&self, name: &str) -> io::Result<(File, Status)> {
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(&self.fd, name, flags, Mode::empty())?;
        let status = Status::of(&rustix::fs::fstat(&fd)?);
        Ok((File::from(fd), status))
    }

    /// Opens the regular file `name` for reading and writing, creating it mode
    /// 0600 if missing (the ledger). Anything but a regular file is refused.
    pub(crate) fn open_or_create(&self, name: &str) -> io::Result<File> {
        let flags = OFlags::RDWR | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(&self.fd, name, flags, Mode::from_raw_mode(FILE_MODE))?;
        if !Status::of(&rustix::fs::fstat(&fd)?).is_file() {
            return Err(io::Error::other(format!("{name} is not a regular file")));
        }
        Ok(File::from(fd))
    }

    /// Creates a new file `{prefix}{10 random characters}`, mode 0600, and returns
    /// its name. Never opens an existing file or follows a link (`O_EXCL`).
    pub(crate) fn create_temp(&self, prefix: &str) -> io::Result<(String, File)> {
        let flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let mut attempts = 0;
        loop {
            let name: String = std::iter::repeat_with(fastrand::alphanumeric)
                .take(10)
                .fold(String::from(prefix), |mut name, c| {
                    name.push(c);
                    name
                });
            match rustix::fs::openat(
                &self.fd,
                name.as_str(),
                flags,
                Mode::from_raw_mode(FILE_MODE),
            ) {
                Ok(fd) => return Ok((name, File::from(fd))),
                Err(Errno::EXIST) if attempts < 8 => attempts += 1,
                Err(errno) => return Err(errno.into()),
            }
        }
    }

    /// Creates or truncates the file `name` (never through a link) and writes
    /// `bytes`: the non-atomic fallback of FR-WF-16g item 3.
    pub(crate) fn overwrite(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        use std::io::Write;
        let flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::TRUNC | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(&self.fd, name, flags, Mode::from_raw_mode(FILE_MODE))?;
        File::from(fd).write_all(bytes)
    }

    /// The status of `name` itself (a link is not followed); `None` if absent.
    pub(crate) fn stat(&self, name: &str) -> io::Result<Option<Status>> {
        match rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => Ok(Some(Status::of(&stat))),
            Err(Errno::NOENT) => Ok(None),
            Err(errno) => Err(errno.into()),
        }
    }

    /// Renames `from` to `to` within this directory, replacing `to`.
    pub(crate) fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        Ok(rustix::fs::renameat(&self.fd, from, &self.fd, to)?)
    }

    /// Links `to` to the file `from` (not following `from` if it is a link);
    /// fails if `to` exists.
    pub(crate) fn link(&self, from: &str, to: &str) -> io::Result<()> {
        Ok(rustix::fs::linkat(
            &self.fd,
            from,
            &self.fd,
            to,
            AtFlags::empty(),
        )?)
    }

    /// Removes the file (or link) `name`.
    pub(crate) fn remove(&self, name: &str) -> io::Result<()> {
        Ok(rustix::fs::unlinkat(&self.fd, name, AtFlags::empty())?)
    }

    /// The names in this directory that are UTF-8, without `.` and `..`.
    pub(crate) fn names(&self) -> io::Result<Vec<String>> {
        let mut names = Vec::new();
        for entry in rustix::fs::Dir::read_from(&self.fd)? {
            let entry = entry?;
            if let Ok(name) = entry.file_name().to_str()
                && name != "."
                && name != ".."
            {
                names.push(name.to_owned());
            }
        }
        Ok(names)
    }
}

/// The cache directory: its path and the handle of its last check. When the
/// directory is removed by hand while a process runs (FR-WF-17b), the handle
/// names a deleted directory; [`Root::reopen`] creates and checks it again.
#[derive(Debug)]
pub(crate) struct Root {
    path: PathBuf,
    current: Mutex<Arc<Dir>>,
}

impl Root {
    /// Creates (mode 0700) and checks the cache directory.
    pub(crate) fn open(path: &Path) -> Result<Root, Refused> {
        let dir = Dir::open_path(path)?;
        Ok(Root {
            path: path.to_path_buf(),
            current: Mutex::new(Arc::new(dir)),
        })
    }

    /// The configured path.
    #[cfg(any(test, feature = "internals"))]
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The directory as last checked.
    pub(crate) fn dir(&self) -> Arc<Dir> {
        Arc::clone(&self.current.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Opens the path again, with every check, and uses it from now on.
    pub(crate) fn reopen(&self) -> Result<Arc<Dir>, Refused> {
        let dir = Arc::new(Dir::open_path(&self.path)?);
        *self.current.lock().unwrap_or_else(|e| e.into_inner()) = Arc::clone(&dir);
        Ok(dir)
    }
}

fn dir_flags() -> OFlags {
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

/// `mkdir -p` with mode 0700 for every directory it creates.
fn create_dir_all(path: &Path) -> io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(DIR_MODE)
        .create(path)
}

/// Names the refusal of an `open(O_DIRECTORY | O_NOFOLLOW)` that failed: `ELOOP`
/// is a symbolic link, `ENOTDIR` something else, or a link too (Linux answers
/// `ENOTDIR` for any link with `O_DIRECTORY`), which `is_link` tells.
fn refusal(errno: Errno, is_link: impl FnOnce() -> bool) -> Refused {
    match errno {
        Errno::LOOP => Refused::Symlink,
        Errno::NOTDIR if is_link() => Refused::Symlink,
        Errno::NOTDIR => Refused::NotADirectory,
        errno => Refused::Io(errno.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{PermissionsExt, symlink};

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
    }

    #[test]
    fn creates_the_directory_and_its_parents_mode_0700() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("a").join("cache");
        let dir = Dir::open_path(&path).unwrap();
        assert_eq!(mode(&path), 0o700);
        assert_eq!(mode(&tmp.path().join("a")), 0o700);
        let shard = dir.subdir("ab", true).unwrap().unwrap();
        assert_eq!(mode(&path.join("ab")), 0o700);
        assert!(shard.names().unwrap().is_empty());
        assert!(dir.subdir("cd", false).unwrap().is_none());
    }

    #[test]
    fn refuses_links_files_and_writable_directories() {
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().join("real");
        std::fs::create_dir(&real).unwrap();
        symlink(&real, tmp.path().join("link")).unwrap();
        let refused = Dir::open_path(&tmp.path().join("link")).unwrap_err();
        assert!(matches!(refused, Refused::Symlink), "{refused}");

        std::fs::write(tmp.path().join("file"), "x").unwrap();
        let refused = Dir::open_path(&tmp.path().join("file")).unwrap_err();
        assert!(matches!(refused, Refused::NotADirectory), "{refused}");

        for bits in [0o777, 0o770, 0o702] {
            std::fs::set_permissions(&real, std::fs::Permissions::from_mode(bits)).unwrap();
            let refused = Dir::open_path(&real).unwrap_err();
            assert!(
                matches!(refused, Refused::Writable { mode } if mode == bits),
                "{refused}"
            );
        }
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o755)).unwrap();
        let dir = Dir::open_path(&real).unwrap();

        // A shard that is a link, even to a directory of ours, is refused.
        symlink(&real, real.join("ab")).unwrap();
        assert!(matches!(dir.subdir("ab", true), Err(Refused::Symlink)));
    }

    #[test]
    fn files_are_never_opened_through_links() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = Dir::open_path(&tmp.path().join("cache")).unwrap();
        let victim = tmp.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        symlink(&victim, tmp.path().join("cache").join("ledger")).unwrap();
        assert!(dir.open_or_create("ledger").is_err());
        assert!(dir.open_read("ledger").is_err());
        assert!(dir.overwrite("ledger", b"bytes").is_err());
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        let status = dir.stat("ledger").unwrap().unwrap();
        assert_eq!(status.kind, FileType::Symlink);
        dir.remove("ledger").unwrap();
        assert!(victim.exists(), "removing the link leaves its target");
    }

    #[test]
    fn temp_files_are_new_and_private() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = Dir::open_path(tmp.path()).unwrap();
        let (name, _file) = dir.create_temp("x.tmp.").unwrap();
        assert!(name.starts_with("x.tmp.") && name.len() == 16, "{name}");
        assert_eq!(mode(&tmp.path().join(&name)), 0o600);
        let (other, _file) = dir.create_temp("x.tmp.").unwrap();
        assert_ne!(name, other);
    }
}
