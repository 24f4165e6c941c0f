//! Results folders that never look complete when they are not.
//!
//! A run opens its folder before it simulates anything: the folder is created (a non-empty one
//! is refused without `--force`), written to once to prove it writable, locked against a second
//! run writing into it at the same time, and marked `INCOMPLETE`. Every file goes to a temporary
//! name and is renamed into place once whole, the summary last; the marker goes when the run
//! has written everything. A run killed, interrupted or out of disk therefore leaves the marker
//! (and no torn file); an error names the file it could not write. The folder lists what it
//! wrote in `.shoal-written`, so that `--force` removes exactly the results of the run it
//! replaces, and nothing else a user keeps there.

use anyhow::{Context, Result, bail};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The marker a folder holds while its run has not finished writing.
pub(crate) const INCOMPLETE: &str = "INCOMPLETE";
/// The lock a running run holds (removed when it ends).
const LOCK: &str = ".shoal.lock";
/// What the last run wrote here, one relative path a line.
const WRITTEN: &str = ".shoal-written";

/// A results folder being written.
pub(crate) struct Folder {
    dir: PathBuf,
    /// Held locked for the folder's life; the lock goes with the process, however it ends.
    _lock: File,
    written: Mutex<Vec<String>>,
}

impl Folder {
    /// Creates and locks `dir` and marks it incomplete; refuses a non-empty folder unless
    /// `force`, which first removes what the previous run wrote there.
    pub(crate) fn open(dir: &Path, force: bool) -> Result<Folder> {
        prepare_dir(dir, force)?;
        let lock = lock(dir)?;
        if force {
            clear(dir)?;
        }
        Folder::marked(dir, lock, Vec::new())
    }

    /// Opens `dir`, a folder an earlier run of the same sweep or comparison wrote (whole or
    /// killed half-way), to finish it: locked and marked incomplete like a new one, and what
    /// is there stays, still listed as written by shoal.
    pub(crate) fn reopen(dir: &Path) -> Result<Folder> {
        let lock = lock(dir)?;
        let list = std::fs::read_to_string(dir.join(WRITTEN)).unwrap_or_default();
        let written = list
            .lines()
            .filter(|l| !l.is_empty())
            .map(str::to_owned)
            .collect();
        Folder::marked(dir, lock, written)
    }

    fn marked(dir: &Path, lock: File, written: Vec<String>) -> Result<Folder> {
        let folder = Folder {
            dir: dir.to_owned(),
            _lock: lock,
            written: Mutex::new(written),
        };
        folder.write(
            INCOMPLETE,
            "This run has not finished writing its results (it is running, or it was killed or \
             failed): the files beside this one are not a complete result.\n",
        )?;
        Ok(folder)
    }

    pub(crate) fn path(&self) -> &Path {
        &self.dir
    }

    /// Writes `name` whole, or not at all: to a temporary name, then renamed into place.
    pub(crate) fn write(&self, name: &str, text: &str) -> Result<()> {
        self.write_with(name, |f| f.write_all(text.as_bytes()))
    }

    /// Like [`Folder::write`], the content written by `fill`.
    pub(crate) fn write_with(
        &self,
        name: &str,
        fill: impl FnOnce(&mut File) -> std::io::Result<()>,
    ) -> Result<()> {
        let path = self.dir.join(name);
        let tmp = self.dir.join(format!(".{name}.tmp"));
        let written = File::create(&tmp)
            .and_then(|mut f| {
                fill(&mut f)?;
                f.flush()?;
                f.sync_all()
            })
            .and_then(|()| std::fs::rename(&tmp, &path));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            return Err(e).with_context(|| format!("cannot write {}", path.display()));
        }
        self.note(name)
    }

    /// Records a file or folder written here (a subfolder's own run records its files).
    pub(crate) fn note(&self, name: &str) -> Result<()> {
        let mut written = self.written.lock().expect("no writer panicked");
        if !written.iter().any(|w| w == name) {
            written.push(name.to_owned());
        }
        let list: String = written.iter().map(|w| format!("{w}\n")).collect();
        let path = self.dir.join(WRITTEN);
        std::fs::write(&path, list).with_context(|| format!("cannot write {}", path.display()))
    }

    /// Everything is written: the marker goes.
    pub(crate) fn finish(&self) -> Result<()> {
        let marker = self.dir.join(INCOMPLETE);
        std::fs::remove_file(&marker).with_context(|| format!("cannot remove {}", marker.display()))
    }
}

impl Drop for Folder {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(self.dir.join(LOCK));
    }
}

/// Locks `dir` against a second run writing into it; the lock goes with the process, however
/// it ends.
fn lock(dir: &Path) -> Result<File> {
    let lock_path = dir.join(LOCK);
    let lock = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .with_context(|| format!("cannot write into {}", dir.display()))?;
    if let Err(e) = lock.try_lock() {
        match e {
            std::fs::TryLockError::WouldBlock => {
                bail!("another shoal run is writing into {}", dir.display())
            }
            std::fs::TryLockError::Error(e) => {
                return Err(e).with_context(|| format!("cannot lock {}", lock_path.display()));
            }
        }
    }
    Ok(lock)
}

/// Whether `dir` is a folder shoal wrote whose file `name` reads exactly `text`.
pub(crate) fn holds(dir: &Path, name: &str, text: &str) -> bool {
    dir.join(WRITTEN).is_file() && std::fs::read_to_string(dir.join(name)).is_ok_and(|t| t == text)
}

/// Whether `dir` holds a complete run: its summary, and no `INCOMPLETE` marker.
pub(crate) fn is_complete(dir: &Path) -> bool {
    dir.join("summary.json").is_file() && !dir.join(INCOMPLETE).exists()
}

/// Removes what the last run wrote into `dir` (as its `.shoal-written` lists, subfolders
/// cleared the same way and removed once empty), so a forced run leaves no stale file of the
/// one it replaces beside its own.
fn clear(dir: &Path) -> Result<()> {
    let list = dir.join(WRITTEN);
    let Ok(text) = std::fs::read_to_string(&list) else {
        return Ok(());
    };
    for name in text.lines().filter(|l| !l.is_empty()) {
        // Only names inside the folder: a hand-edited list cannot reach outside it.
        if name.contains(['/', '\\']) || name == ".." || name == "." {
            continue;
        }
        let path = dir.join(name);
        let gone = if path.is_dir() {
            clear(&path)?;
            let _ = std::fs::remove_file(path.join(INCOMPLETE));
            let _ = std::fs::remove_file(path.join(WRITTEN));
            // A folder that still holds something was not all ours: it stays.
            let _ = std::fs::remove_dir(&path);
            Ok(())
        } else {
            std::fs::remove_file(&path)
        };
        if let Err(e) = gone
            && e.kind() != std::io::ErrorKind::NotFound
        {
            return Err(e).with_context(|| format!("cannot remove {}", path.display()));
        }
    }
    let _ = std::fs::remove_file(dir.join(INCOMPLETE));
    std::fs::remove_file(&list).with_context(|| format!("cannot remove {}", list.display()))
}

/// Creates `dir`, refusing a non-empty one unless `force`.
///
/// The folder is created first and its contents read afterwards: asking `dir.exists()` first
/// misses a folder that a path like `out/..` names only once `out/` exists, and the run would
/// then replace the files of the current folder. When refused, the folders created here are
/// removed again, so a refusal leaves the disk as it was.
fn prepare_dir(dir: &Path, force: bool) -> Result<()> {
    if dir.exists() && !dir.is_dir() {
        bail!("{} exists and is not a directory", dir.display());
    }
    // The folders `create_dir_all` will make, deepest first: ancestors that do not exist yet
    // (one ending in ".." names a folder that exists once its parent does, so it is left be).
    let missing: Vec<&Path> = dir
        .ancestors()
        .filter(|a| a.file_name().is_some() && std::fs::symlink_metadata(a).is_err())
        .collect();
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let non_empty = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .next()
        .is_some();
    if non_empty && !force {
        for created in missing {
            // Only empty folders go; one that is not empty was not made here.
            let _ = std::fs::remove_dir(created);
        }
        bail!(
            "{} is not empty: choose another --out DIR, or pass --force to replace the results \
             of the run that wrote it",
            dir.display()
        );
    }
    Ok(())
}

/// Whether `a` and `b` name the same existing file (through links and `..` alike).
pub(crate) fn same_file(a: &Path, b: &Path) -> bool {
    a.canonicalize()
        .ok()
        .is_some_and(|a| b.canonicalize().ok() == Some(a))
}
