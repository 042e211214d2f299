//! The fixed tables exec approvals judge by: builtins that need no entry, programs that are
//! never covered, and the environment variables a command may set and stay covered.

use crate::command::base_name;

/// Shell builtins that change nothing and run nothing; covered without an entry.
pub(crate) const SAFE_BUILTINS: [&str; 6] = [":", "true", "false", "pwd", "cd", "echo"];

/// Programs never covered, whatever the configuration: shells, interpreters that evaluate
/// inline code, programs that run other command lines, and bash builtins that run code,
/// define aliases or change which file a name runs. Version suffixes (`python3.12`) are
/// ignored.
const NEVER_COVERED: [&str; 80] = [
    "sh",
    "bash",
    "zsh",
    "dash",
    "ksh",
    "mksh",
    "ash",
    "yash",
    "fish",
    "csh",
    "tcsh",
    "busybox",
    "python",
    "pypy",
    "node",
    "nodejs",
    "deno",
    "bun",
    "perl",
    "ruby",
    "php",
    "lua",
    "luajit",
    "tclsh",
    "wish",
    "osascript",
    "pwsh",
    "powershell",
    "rscript",
    "awk",
    "gawk",
    "mawk",
    "nawk",
    "eval",
    "source",
    ".",
    "exec",
    "sudo",
    "doas",
    "su",
    "pkexec",
    "runuser",
    "watch",
    "flock",
    "chroot",
    "unshare",
    "nsenter",
    "script",
    "ionice",
    "chrt",
    "taskset",
    "strace",
    "ltrace",
    "gdb",
    "unbuffer",
    "parallel",
    "systemd-run",
    "at",
    "batch",
    "crontab",
    "expect",
    "setpriv",
    "prlimit",
    "bwrap",
    "firejail",
    "xdg-open",
    "sg",
    "trap",
    "builtin",
    "enable",
    "alias",
    "hash",
    "let",
    "mapfile",
    "readarray",
    "compgen",
    "complete",
    "fc",
    "bind",
    "coproc",
];

/// Environment variables a command may set and stay covered.
const SAFE_ENV: [&str; 11] = [
    "LANG",
    "LANGUAGE",
    "TZ",
    "TERM",
    "NO_COLOR",
    "FORCE_COLOR",
    "CLICOLOR",
    "CLICOLOR_FORCE",
    "COLUMNS",
    "LINES",
    "RUST_BACKTRACE",
];

/// Whether a variable set for a program leaves what runs unchanged.
pub(crate) fn safe_env(name: &str) -> bool {
    SAFE_ENV.contains(&name) || name.starts_with("LC_")
}

/// Shells, interpreters and command runners, by file name, ignoring a version suffix.
pub(crate) fn never_covered(program: &str) -> bool {
    let base = base_name(program).to_ascii_lowercase();
    let unversioned = base.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.' || c == '-');
    NEVER_COVERED.contains(&base.as_str())
        || (!unversioned.is_empty() && NEVER_COVERED.contains(&unversioned))
}
