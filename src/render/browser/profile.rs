//! The temporary Chromium profile of one call (BROWSER-ISO-01): created fresh and
//! private, deleted when the call ends, and, when its owner died without deleting
//! it, deleted by the next launch.
//!
//! Every way a host can end is covered by someone: `Drop` and `shutdown` delete the
//! profile of a call that ends in this process, and the watchdog (`launch.rs`)
//! that of a host that dies. Only when the host and its watchdog are both killed
//! outright (`pkill -9 -f webfetch`, a SIGKILL of the whole service's cgroup) is
//! nobody left: the profile and possibly Chromium would then outlive them, a
//! leak of RAM in `/dev/shm` at every such kill. So every profile holds an owner
//! lock, an exclusive `flock` on `.webfetch-owner` inside it, taken by the host
//! before anything else can see the file and released by the kernel when the host
//! dies, however it dies. A launch sweeps the root it creates its profile in: a
//! profile whose owner lock it can take has no owner, so it kills what still
//! names the profile and deletes it.

use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Prefix of every temporary profile directory; the name is also how stragglers
/// are found (`/proc/*/cmdline` naming the profile) and what the CI checks for.
pub(crate) const PROFILE_PREFIX: &str = "webfetch-chromium-";

/// The owner lock's file name, at the top of the profile (beside Chromium's
/// `data`, `home` and `tmp`).
const OWNER_LOCK: &str = ".webfetch-owner";

/// How long cleanup waits for killed processes to go before deleting anyway.
const KILL_WAIT: Duration = Duration::from_secs(5);

/// Where profiles go by default: `/dev/shm` first on Linux, then the system temp
/// dir. A RAM-backed profile is created and deleted in milliseconds (on a disk
/// mounted with `discard`, deleting Chromium's ~200 profile files took 0.3-0.5 s)
/// and never reaches a disk at all.
pub(crate) fn default_profile_roots() -> Vec<PathBuf> {
    if cfg!(target_os = "linux") {
        vec![PathBuf::from("/dev/shm"), std::env::temp_dir()]
    } else {
        vec![std::env::temp_dir()]
    }
}

/// One call's profile directory, locked by this process as its owner.
pub(crate) struct Profile {
    dir: tempfile::TempDir,
    /// Held until the profile is deleted; `None` where there is no `flock`.
    _owner: Option<owner::Lock>,
}

impl Profile {
    /// A fresh, uniquely named, private (0700) directory in the first of `root`
    /// (or [`default_profile_roots`]) that takes one (BROWSER-ISO-01 step 1), owned
    /// by this process. Then sweeps that root of profiles whose owner is gone.
    pub(crate) fn create(root: Option<&Path>) -> io::Result<Profile> {
        let roots = match root {
            Some(root) => vec![root.to_path_buf()],
            None => default_profile_roots(),
        };
        let mut last = io::Error::new(io::ErrorKind::NotFound, "no profile root");
        for root in roots {
            match tempfile::Builder::new()
                .prefix(PROFILE_PREFIX)
                .tempdir_in(&root)
            {
                Ok(dir) => {
                    let owner = owner::Lock::take(dir.path())?;
                    sweep(&root, dir.path());
                    return Ok(Profile { dir, _owner: owner });
                }
                Err(error) => last = error,
            }
        }
        Err(last)
    }

    /// The profile directory.
    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Deletes the profile, retrying briefly in case a file system is slow to let
    /// go. The owner lock goes with it.
    pub(crate) fn remove(self) {
        remove_dir(&self.dir.keep());
    }
}

/// Deletes every profile in `root` but `own` whose owner is gone, after killing
/// whatever still names it. Best effort: what cannot be read or deleted is left.
fn sweep(root: &Path, own: &Path) {
    // This process made `own` a moment ago: its owner is this process's user.
    let (Ok(entries), Some(user)) = (std::fs::read_dir(root), owner::user_of(own)) else {
        return;
    };
    for entry in entries.flatten() {
        let is_profile = entry
            .file_name()
            .to_str()
            .is_some_and(|name| name.starts_with(PROFILE_PREFIX));
        // `file_type` does not follow symlinks: a link is never swept through.
        if !is_profile || !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let path = entry.path();
        if path == own {
            continue;
        }
        let Some(_abandoned) = owner::Lock::take_abandoned(&path, user) else {
            continue;
        };
        tracing::info!(
            target: "webfetch::browser",
            event = "browser_profile_swept",
            path = %path.display(),
            "deleting a Chromium profile whose owner died without deleting it"
        );
        kill_processes_naming_until_gone(&path);
        remove_dir(&path);
    }
}

/// Deletes `path`, retrying briefly in case a file system is slow to let go.
fn remove_dir(path: &Path) {
    for attempt in 0..10 {
        match std::fs::remove_dir_all(path) {
            Ok(()) => return,
            Err(error) if error.kind() == io::ErrorKind::NotFound => return,
            Err(error) if attempt == 9 => {
                tracing::warn!(
                    target: "webfetch::browser",
                    %error,
                    path = %path.display(),
                    "could not delete the temporary Chromium profile"
                );
            }
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

/// SIGKILLs every process that names `profile` until none is left alive, for up
/// to [`KILL_WAIT`]: no process may still write into a profile being deleted.
pub(crate) fn kill_processes_naming_until_gone(profile: &Path) {
    let until = std::time::Instant::now() + KILL_WAIT;
    while kill_processes_naming(profile) && std::time::Instant::now() < until {
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// SIGKILLs every live process whose command line mentions `profile` (crashpad
/// handlers run in their own session, outside the group; a killed process may
/// take a moment to go). Returns whether there was any. Linux only; elsewhere the
/// group kill is all there is.
fn kill_processes_naming(profile: &Path) -> bool {
    #[cfg(target_os = "linux")]
    {
        let pids = processes_naming(profile);
        for pid in &pids {
            if let Ok(pid) = i32::try_from(*pid) {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
        }
        !pids.is_empty()
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = profile;
        false
    }
}

/// Live processes whose command line contains `needle`'s path (a zombie's
/// command line is empty, so zombies never match).
#[cfg(target_os = "linux")]
fn processes_naming(needle: &Path) -> Vec<u32> {
    let needle = needle.display().to_string();
    let me = std::process::id();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| *pid != me)
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|cmdline| {
                String::from_utf8_lossy(&cmdline)
                    .split('\0')
                    .any(|arg| arg.contains(needle.as_str()))
            })
        })
        .collect()
}

/// The owner lock: an exclusive `flock` on [`OWNER_LOCK`], which the kernel
/// releases when the last descriptor of it closes, that is when its owner ends.
/// The descriptor is close-on-exec (Rust opens every file so), so neither
/// Chromium nor the watchdog holds it: a Chromium orphaned by its owner's death
/// must not keep its profile from the sweep.
#[cfg(unix)]
mod owner {
    use std::fs::{File, OpenOptions};
    use std::io;
    use std::os::unix::fs::{MetadataExt as _, OpenOptionsExt as _};
    use std::path::Path;

    use nix::fcntl::{Flock, FlockArg, OFlag};

    use super::OWNER_LOCK;

    /// The user owning `path`.
    pub(super) fn user_of(path: &Path) -> Option<u32> {
        std::fs::metadata(path).ok().map(|m| m.uid())
    }

    pub(super) struct Lock {
        /// Unlocked when dropped.
        _held: Flock<File>,
    }

    impl Lock {
        /// Locks a new owner file in `profile`. The file is locked under a
        /// temporary name and renamed into place, so a sweep never finds it
        /// unlocked while its owner lives.
        pub(super) fn take(profile: &Path) -> io::Result<Option<Lock>> {
            let staging = profile.join(".webfetch-owner.new");
            let file = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&staging)?;
            match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
                Ok(locked) => {
                    std::fs::rename(&staging, profile.join(OWNER_LOCK))?;
                    Ok(Some(Lock { _held: locked }))
                }
                // A file system without `flock`: no owner lock, so no sweep
                // will ever take this profile for abandoned.
                Err(_) => {
                    let _ = std::fs::remove_file(&staging);
                    Ok(None)
                }
            }
        }

        /// The owner lock of `profile` when its owner is gone: the file exists,
        /// was made by `user` (another user's profile is theirs to clean up), and
        /// nobody holds its lock.
        pub(super) fn take_abandoned(profile: &Path, user: u32) -> Option<Lock> {
            let file = OpenOptions::new()
                .read(true)
                .custom_flags(OFlag::O_NOFOLLOW.bits())
                .open(profile.join(OWNER_LOCK))
                .ok()?;
            if file.metadata().ok()?.uid() != user {
                return None;
            }
            Flock::lock(file, FlockArg::LockExclusiveNonblock)
                .ok()
                .map(|held| Lock { _held: held })
        }
    }
}

/// Without `flock` there is no owner lock, and no sweep.
#[cfg(not(unix))]
mod owner {
    use std::io;
    use std::path::Path;

    pub(super) struct Lock;

    pub(super) fn user_of(_path: &Path) -> Option<u32> {
        None
    }

    impl Lock {
        pub(super) fn take(_profile: &Path) -> io::Result<Option<Lock>> {
            Ok(None)
        }

        pub(super) fn take_abandoned(_profile: &Path, _user: u32) -> Option<Lock> {
            None
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// A profile as a dead owner leaves it: the owner file, unlocked.
    fn abandoned(root: &Path, name: &str) -> PathBuf {
        let path = root.join(name);
        std::fs::create_dir_all(path.join("data")).unwrap();
        std::fs::write(path.join(OWNER_LOCK), b"").unwrap();
        path
    }

    #[test]
    fn browser_iso_01_a_profile_whose_owner_died_is_swept_by_the_next_launch() {
        let root = tempfile::tempdir().unwrap();
        let dead = abandoned(root.path(), &format!("{PROFILE_PREFIX}dead"));
        let profile = Profile::create(Some(root.path())).unwrap();
        assert!(!dead.exists(), "swept");
        assert!(profile.path().join(OWNER_LOCK).exists());
        let path = profile.path().to_path_buf();
        profile.remove();
        assert!(!path.exists());
    }

    #[test]
    fn browser_iso_01_a_live_profile_is_never_swept() {
        let root = tempfile::tempdir().unwrap();
        let first = Profile::create(Some(root.path())).unwrap();
        let second = Profile::create(Some(root.path())).unwrap();
        assert!(first.path().exists(), "its owner lives");
        // The second's sweep could not take the first's lock, and the first's
        // owner lock is what a sweep tries: held, not abandoned.
        let user = owner::user_of(first.path()).unwrap();
        assert!(owner::Lock::take_abandoned(first.path(), user).is_none());
        drop(second);
        assert!(first.path().exists());
    }

    #[test]
    fn browser_iso_01_the_sweep_leaves_what_is_not_an_abandoned_profile() {
        let root = tempfile::tempdir().unwrap();
        // Not ours by name, though it looks abandoned.
        let foreign = abandoned(root.path(), "other-dir");
        // Ours by name, but without an owner file (being created, or older).
        let unmarked = root.path().join(format!("{PROFILE_PREFIX}unmarked"));
        std::fs::create_dir(&unmarked).unwrap();
        // A link named like a profile, to an abandoned-looking directory.
        let elsewhere = tempfile::tempdir().unwrap();
        let target = abandoned(elsewhere.path(), "target");
        let link = root.path().join(format!("{PROFILE_PREFIX}link"));
        std::os::unix::fs::symlink(&target, &link).unwrap();
        // A file named like a profile.
        let file = root.path().join(format!("{PROFILE_PREFIX}file"));
        std::fs::write(&file, b"").unwrap();

        let profile = Profile::create(Some(root.path())).unwrap();
        for kept in [&foreign, &unmarked, &link, &target, &file] {
            assert!(kept.exists(), "{} kept", kept.display());
        }
        profile.remove();
    }
}
