//! The key people's JWTs are signed with: a file outside Redis (`sessions.jwt_key_file`,
//! by default `<data_dir>/jwt.key`), readable by its owner only, made at the first start.
//!
//! Outside Redis, a failover cannot swap it (a secret written to a primary that dies before
//! its replica has it would be replaced by another process's, and every JWT refused), and
//! nobody who reads Redis's data (a dump, the AOF, a replica) learns it. API processes on
//! several machines share one file (copied before they start).
//!
//! An earlier version kept the secret in Redis (`auth:jwt_secret`): the first start without a
//! file takes that one into the file (so JWTs already handed out stay valid) and deletes it
//! from Redis.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use horst_store::Store;

use crate::IdentityError;

/// The file holds this many random bytes as hex.
const KEY_BYTES: usize = 32;

/// Where the key of earlier versions was kept in Redis.
fn legacy_key(store: &Store) -> String {
    store.key("auth:jwt_secret")
}

/// The signing key in `path`, creating the file (mode 0600) if there is none: from the
/// secret an earlier version kept in Redis, else from fresh random bytes. Several processes
/// starting at once agree: the file appears whole or not at all (a hard link of a finished
/// temporary file), and whoever loses the race reads the winner's.
pub async fn load_or_create(store: &Store, path: &Path) -> Result<Vec<u8>, IdentityError> {
    if let Some(key) = read(path)? {
        forget_legacy(store).await?;
        return Ok(key);
    }
    let legacy: Option<String> = redis::cmd("GET")
        .arg(legacy_key(store))
        .query_async(&mut store.conn())
        .await?;
    let fresh = match legacy.filter(|s| s.len() >= 2 * KEY_BYTES) {
        Some(s) => s,
        None => horst_store::random::secret_hex(KEY_BYTES).map_err(IdentityError::Internal)?,
    };
    create(path, &fresh)?;
    let key = read(path)?.ok_or_else(|| missing(path))?;
    forget_legacy(store).await?;
    Ok(key)
}

/// Deletes the secret an earlier version kept in Redis (once it is in the file).
async fn forget_legacy(store: &Store) -> Result<(), IdentityError> {
    let _: () = redis::cmd("DEL")
        .arg(legacy_key(store))
        .query_async(&mut store.conn())
        .await?;
    Ok(())
}

fn missing(path: &Path) -> IdentityError {
    IdentityError::Internal(format!(
        "the JWT key file {} vanished while it was made",
        path.display()
    ))
}

fn io(path: &Path, what: &str, e: std::io::Error) -> IdentityError {
    IdentityError::Internal(format!(
        "cannot {what} the JWT key file {} ({e}); check sessions.jwt_key_file and the directory's owner",
        path.display()
    ))
}

/// The key in `path` (`None`: no such file). A file others may read or write is refused:
/// whoever reads it can sign a JWT for anyone.
fn read(path: &Path) -> Result<Option<Vec<u8>>, IdentityError> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(path, "read", e)),
    };
    if !meta.is_file() {
        return Err(IdentityError::Internal(format!(
            "the JWT key file {} is not a regular file (a symbolic link or a directory); give sessions.jwt_key_file a plain file",
            path.display()
        )));
    }
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(IdentityError::Internal(format!(
            "the JWT key file {} may be read by others (mode {mode:o}); make it the owner's only: chmod 600 {}",
            path.display(),
            path.display()
        )));
    }
    let text = std::fs::read_to_string(path).map_err(|e| io(path, "read", e))?;
    let key = text.trim();
    if key.len() < 2 * KEY_BYTES || !key.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(IdentityError::Internal(format!(
            "the JWT key file {} does not hold a key ({} hex digits or more); delete it to have a new one made (every JWT handed out so far is then refused)",
            path.display(),
            2 * KEY_BYTES
        )));
    }
    Ok(Some(key.as_bytes().to_vec()))
}

/// Writes `key` to `path` unless a file is there already (then nothing changes).
fn create(path: &Path, key: &str) -> Result<(), IdentityError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        if !dir.exists() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(|e| io(path, "create the directory of", e))?;
        }
    }
    let tmp = temporary(path);
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)
        .and_then(|mut f| {
            f.write_all(key.as_bytes())?;
            f.write_all(b"\n")?;
            f.sync_all()
        });
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(io(path, "write", e));
    }
    // A hard link never replaces an existing file: of two processes, one links, the other
    // finds the file there and uses it.
    let linked = std::fs::hard_link(&tmp, path);
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(io(path, "create", e)),
    }
}

fn temporary(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".{}.tmp", std::process::id()));
    path.with_file_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_made_file_is_the_owners_only_and_a_second_make_keeps_the_first() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("keys").join("jwt.key");
        create(&path, &"a".repeat(64)).unwrap();
        create(&path, &"b".repeat(64)).unwrap();
        let meta = std::fs::metadata(&path).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        let parent = std::fs::metadata(path.parent().unwrap()).unwrap();
        assert_eq!(parent.permissions().mode() & 0o777, 0o700);
        assert_eq!(read(&path).unwrap().unwrap(), "a".repeat(64).into_bytes());
        assert_eq!(
            std::fs::read_dir(path.parent().unwrap()).unwrap().count(),
            1
        );
    }

    #[test]
    fn files_others_may_read_links_and_short_keys_are_refused_with_advice() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("jwt.key");
        assert!(read(&path).unwrap().is_none());
        std::fs::write(&path, "c".repeat(64)).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let e = read(&path).unwrap_err().to_string();
        assert!(e.contains("chmod 600"), "{e}");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(read(&path).unwrap().is_some());
        let link = dir.path().join("link.key");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        assert!(read(&link).is_err());
        std::fs::write(&path, "short").unwrap();
        let e = read(&path).unwrap_err().to_string();
        assert!(e.contains("delete it"), "{e}");
    }
}
