//! Embeds the source revision the binary is built from as `SHOAL_REVISION`: the value of the
//! environment variable `SHOAL_REVISION` if the build sets one (a release tarball without
//! `.git`), otherwise the commit `git rev-parse HEAD` names, otherwise "unknown". Uncommitted
//! changes are not marked: the revision says which commit the build started from.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?;
    Some(text.trim().to_owned()).filter(|t| !t.is_empty())
}

fn main() {
    println!("cargo:rerun-if-env-changed=SHOAL_REVISION");
    // Rebuilt when HEAD moves: HEAD itself (a branch switch) and the files a commit rewrites.
    for what in ["HEAD", "packed-refs"] {
        if let Some(path) = git(&["rev-parse", "--git-path", what]) {
            println!("cargo:rerun-if-changed={path}");
        }
    }
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"])
        && let Some(path) = git(&["rev-parse", "--git-path", &branch])
    {
        println!("cargo:rerun-if-changed={path}");
    }
    let revision = std::env::var("SHOAL_REVISION")
        .ok()
        .filter(|r| !r.is_empty())
        .or_else(|| git(&["rev-parse", "HEAD"]))
        .unwrap_or_else(|| "unknown".to_owned());
    println!("cargo:rustc-env=SHOAL_REVISION={revision}");
}
