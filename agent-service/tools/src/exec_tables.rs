//! The fixed tables exec approvals judge by: builtins that need no entry, programs that are
//! never covered, and the environment variables a command may set and stay covered.

use crate::command::base_name;

/// Shell builtins that change nothing and run nothing; covered without an entry.
pub(crate) const SAFE_BUILTINS: [&str; 6] = [":", "true", "false", "pwd", "cd", "echo"];

/// Programs never covered, whatever the configuration: shells, interpreters that evaluate
/// inline code, programs that run other command lines, and shell builtins that run code,
/// define aliases, change which file a name runs, set variables or options, or change
/// directory. A builtin runs as the shell's own code whatever file of its name `PATH` holds
/// (some systems ship `/usr/bin/read`, `/usr/bin/getopts` ...), so an allowlist entry for
/// such a file must not cover it: `read PATH` or `getopts` would set a variable, `set -k`
/// would change how later words are read, `pushd` would move the shell where the next
/// relative program is not the one judged. Version suffixes (`python3.12`) are ignored.
const NEVER_COVERED: [&str; 92] = [
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
    "read",
    "getopts",
    "set",
    "shopt",
    "export",
    "readonly",
    "declare",
    "typeset",
    "local",
    "unset",
    "pushd",
    "popd",
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

/// Whether a variable set for a program leaves what runs unchanged. A locale, terminal or
/// zone variable set to a path is reported as `NAME to a path` (see `command::Invocation::env`),
/// which is no variable name and so never safe.
pub(crate) fn safe_env(name: &str) -> bool {
    let identifier = name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    identifier && (SAFE_ENV.contains(&name) || name.starts_with("LC_"))
}

/// Shells, interpreters and command runners, by file name, ignoring a version suffix.
pub(crate) fn never_covered(program: &str) -> bool {
    let base = base_name(program).to_ascii_lowercase();
    let unversioned = base.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.' || c == '-');
    NEVER_COVERED.contains(&base.as_str())
        || (!unversioned.is_empty() && NEVER_COVERED.contains(&unversioned))
}

/// Why a builtin that is also a file must not be covered with these arguments, if so. bash's
/// `printf -v NAME` assigns the output to a shell variable instead of printing it: `printf
/// -v PATH %s dir` changes which file every later name runs, and `printf -v 'a[x]'`
/// evaluates the subscript as arithmetic, which runs a command substitution held in `x`. An
/// allowlist entry for `/usr/bin/printf` judges the file, not the builtin, so any option
/// before the format (the builtin has no other) is refused.
pub(crate) fn builtin_refusal(program: &str, args: &[String]) -> Option<String> {
    if base_name(program) == "printf"
        && let Some(first) = args.first()
        && first.starts_with('-')
        && first != "--"
        && first != "-"
    {
        return Some(format!(
            "{program} {first} is refused: the shell's printf assigns to a variable with -v, \
             which can change what later commands run"
        ));
    }
    None
}
