//! Reading a small file the configuration names for a secret or a trust anchor
//! (a Redis URL with its password, a CA): "nothing local another user can write
//! is trusted", applied to the files the configuration names.
//!
//! The file is opened without following a final symbolic link, and the checks
//! are made on the opened file itself (`fstat`), so a name swapped after the
//! check is never read: a regular file, owned by the effective user or root,
//! with no group or other write bit, at most `max_bytes` long.

use std::io::Read;
use std::path::Path;

/// The file's bytes, or why it is refused (never its contents).
#[cfg(unix)]
pub(crate) fn read(path: &Path, max_bytes: u64) -> Result<Vec<u8>, String> {
    use rustix::fs::{FileType, Mode, OFlags};

    let fd = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
        Mode::empty(),
    )
    .map_err(|errno| match errno {
        rustix::io::Errno::LOOP => "is a symbolic link".to_owned(),
        other => format!("cannot be opened: {}", std::io::Error::from(other)),
    })?;
    let stat = rustix::fs::fstat(&fd).map_err(|e| format!("cannot be read: {e}"))?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
        return Err("is not a regular file".to_owned());
    }
    let euid = rustix::process::geteuid().as_raw();
    if stat.st_uid != euid && stat.st_uid != 0 {
        return Err(format!(
            "is owned by uid {}, not by this user ({euid}) or root",
            stat.st_uid
        ));
    }
    if stat.st_mode & 0o022 != 0 {
        return Err(format!(
            "is writable by group or others (mode {:o}); chmod go-w it",
            stat.st_mode & 0o777
        ));
    }
    let mut bytes = Vec::new();
    std::fs::File::from(fd)
        .take(max_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot be read: {e}"))?;
    if u64::try_from(bytes.len()).unwrap_or(u64::MAX) > max_bytes {
        return Err(format!("is larger than {max_bytes} bytes"));
    }
    Ok(bytes)
}

/// Elsewhere: no ownership model to check; the size cap still holds.
#[cfg(not(unix))]
pub(crate) fn read(path: &Path, max_bytes: u64) -> Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .map_err(|e| format!("cannot be opened: {e}"))?
        .take(max_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot be read: {e}"))?;
    if bytes.len() as u64 > max_bytes {
        return Err(format!("is larger than {max_bytes} bytes"));
    }
    Ok(bytes)
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn refuses_links_directories_shared_files_and_big_files() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("secret");
        std::fs::write(&file, "redis://:pw@h/").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
        assert_eq!(read(&file, 100).unwrap(), b"redis://:pw@h/");
        assert!(read(&file, 3).unwrap_err().contains("larger"));

        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert!(read(&link, 100).unwrap_err().contains("symbolic link"));
        assert!(read(dir.path(), 100).unwrap_err().contains("regular file"));

        for mode in [0o660, 0o602] {
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode)).unwrap();
            let why = read(&file, 100).unwrap_err();
            assert!(why.contains("writable by group or others"), "{why}");
            assert!(!why.contains("pw"), "{why}");
        }
        assert!(read(&dir.path().join("missing"), 100).is_err());

        // Another user's file, however private (root can make one).
        if rustix::process::geteuid().is_root() {
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
            std::os::unix::fs::chown(&file, Some(65534), Some(65534)).unwrap();
            assert!(read(&file, 100).unwrap_err().contains("owned by uid 65534"));
        }
    }
}
