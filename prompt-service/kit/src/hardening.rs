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
