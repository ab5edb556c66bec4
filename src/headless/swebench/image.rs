//! Files taken out of an instance's image through the engine's command
//! line (a tar stream of the image's `/testbed`, nothing written in the
//! image): the files its git ignores, to seed a worktree made from a
//! local clone, or the whole repository, when there is no local clone.

use std::fs::File;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};

/// Copies the files git ignores in the image's `/testbed` (what building
/// the environment made) into `tree`. Nothing to do for an image without
/// a git repository there.
pub fn seed_ignored(
    program: &Path,
    engine: &str,
    image: &str,
    tree: &Path,
    log: &mut File,
) -> Result<(), String> {
    let script = "cd /testbed 2>/dev/null && [ -d .git ] && command -v git >/dev/null 2>&1 || exit 0; \
        git ls-files -z --others --ignored --exclude-standard --directory | tar --null -T - -cf -";
    let _ = writeln!(log, "# copying the files the image's /testbed ignores");
    let copied = copy_out(program, engine, image, script, tree, log)?;
    let _ = writeln!(
        log,
        "# {}",
        if copied {
            "copied"
        } else {
            "nothing to copy (no git repository at /testbed in the image)"
        }
    );
    Ok(())
}

/// Copies the image's whole `/testbed` (its git repository included) into
/// `tree`, for an instance without a local clone.
pub fn export_testbed(
    program: &Path,
    engine: &str,
    image: &str,
    tree: &Path,
    log: &mut File,
) -> Result<(), String> {
    let script = "cd /testbed 2>/dev/null && [ -d .git ] || exit 0; tar -cf - .";
    let _ = writeln!(
        log,
        "# no local clone: the repository comes from the image's /testbed"
    );
    if !copy_out(program, engine, image, script, tree, log)? {
        return Err(format!(
            "the image {image} has no git repository at /testbed, and --repos has no clone of this repository: give a clone under --repos"
        ));
    }
    let _ = writeln!(log, "# copied the image's /testbed");
    Ok(())
}

/// Runs `script` in a throwaway container of `image` and unpacks the tar
/// stream it writes into `tree`; `false` when it wrote nothing.
fn copy_out(
    program: &Path,
    engine: &str,
    image: &str,
    script: &str,
    tree: &Path,
    log: &mut File,
) -> Result<bool, String> {
    let err = log
        .try_clone()
        .map_err(|e| format!("cannot share the environment log: {e}"))?;
    let mut source = Command::new(program)
        .args(["run", "--rm", "--network", "none", "--entrypoint", "sh"])
        .args([image, "-c", script])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(err)
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", program.display()))?;
    let mut out = source
        .stdout
        .take()
        .ok_or("no output pipe from the engine")?;
    let mut first = [0u8; 512];
    let mut got = 0;
    while got < first.len() {
        match out.read(&mut first[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(format!("reading the image's files: {e}")),
        }
    }
    if got > 0 {
        std::fs::create_dir_all(tree)
            .map_err(|e| format!("cannot create {}: {e}", tree.display()))?;
        let mut tar = Command::new("tar")
            .arg("-xf")
            .arg("-")
            .arg("-C")
            .arg(tree)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot run tar: {e}"))?;
        let mut input = tar.stdin.take().ok_or("no input pipe to tar")?;
        // tar may stop reading at the archive's end marker, before the
        // padding after it: a write that fails then is not an error (tar's
        // own status says whether the archive was whole).
        let _ = input
            .write_all(&first[..got])
            .and_then(|()| std::io::copy(&mut out, &mut input).map(|_| ()));
        drop(input);
        let done = tar
            .wait_with_output()
            .map_err(|e| format!("tar failed: {e}"))?;
        let _ = log.write_all(&done.stderr);
        // The rest, so the writer in the container finishes cleanly.
        let _ = std::io::copy(&mut out, &mut std::io::sink());
        if !done.status.success() {
            return Err(format!(
                "could not copy the image's files into {}: {}",
                tree.display(),
                String::from_utf8_lossy(&done.stderr).trim()
            ));
        }
    }
    let status = source
        .wait()
        .map_err(|e| format!("waiting for {engine}: {e}"))?;
    if !status.success() {
        return Err(format!(
            "{engine} run {image} failed ({status}); pull or build the image (`{engine} pull {image}`), or give --image; the engine's output is in env.log"
        ));
    }
    Ok(got > 0)
}
