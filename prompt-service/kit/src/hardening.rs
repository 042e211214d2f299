//! What a service does to its own process before it reads a secret.

/// Marks this process non-dumpable (`PR_SET_DUMPABLE` 0): other processes of the same user,
/// such as the commands an agent runs, can no longer read its `/proc/<pid>/environ` (where
/// provider keys and bearer tokens passed as variables live), `mem`, `maps` or file
/// descriptors, nor attach a debugger to it, and it leaves no core dump. A process with
/// `CAP_SYS_PTRACE` (root, usually) still can. Programs the service starts are dumpable again
/// once they exec.
pub fn deny_same_user_inspection() -> Result<(), String> {
    nix::sys::prctl::set_dumpable(false)
        .map_err(|e| format!("cannot mark the process non-dumpable: {e}"))
}

/// Closes every descriptor above stderr this process was started with.
///
/// A program starts its children with every descriptor it holds that is not close-on-exec,
/// and neither bubblewrap nor util-linux's wrappers close any: a descriptor left open by
/// whatever started the service (a shell's `exec 3<`, a supervisor, a leaked pipe) would be
/// open in every command agents run, sandboxed ones included, and a directory descriptor
/// reaches the host's whole tree through `/proc/self/fd/N/..`. Everything this process opens
/// itself is close-on-exec (Rust's standard library and tokio open nothing else), so once
/// the inherited ones are gone the commands get their three streams and nothing more. Call
/// it first thing in `main`, before any thread, runtime or object could own a descriptor:
/// every descriptor above stderr is closed. Nothing the services take is handed down as a
/// descriptor (no socket activation); a file named `/dev/fd/N` (a shell's `<(...)`) is
/// closed with the rest, so files are named by path.
pub fn close_inherited_descriptors() -> Result<(), String> {
    let fail = |e: std::io::Error| format!("cannot list the inherited descriptors: {e}");
    let listing = std::fs::read_dir("/proc/self/fd").map_err(fail)?;
    // The listing's own descriptor shows up in it, as a link to the directory it reads.
    let own = std::path::PathBuf::from(format!("/proc/{}/fd", std::process::id()));
    let mut inherited = Vec::new();
    for entry in listing {
        let entry = entry.map_err(fail)?;
        let Some(fd) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        if fd > 2 && std::fs::read_link(entry.path()).ok().as_deref() != Some(own.as_path()) {
            inherited.push(fd);
        }
    }
    for fd in inherited {
        match nix::unistd::close(fd) {
            Ok(()) | Err(nix::errno::Errno::EBADF) => {}
            Err(e) => return Err(format!("cannot close inherited descriptor {fd}: {e}")),
        }
    }
    Ok(())
}
