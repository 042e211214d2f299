//! The commands a shell command line would really run: the one analyzer behind exec
//! approvals, for our `exec` tool and for Codex's command approvals (lesson L15 d: judge the
//! effective command, unwrap `sh -c` and `env`, split chains).
//!
//! A line is split on `;`, `&`, `|`, `&&`, `||` and newlines, honouring quotes and
//! backslashes. Shell keywords (`if`, `then`, `do`, `!`, `{` ...) and leading `NAME=value`
//! assignments are stepped over. Wrappers that only start another program are unwrapped:
//! `sh -c`/`bash -lc` (and the other shells) by analysing their script, `env`, `nice`,
//! `timeout`, `nohup`, `stdbuf`, `time`, `command`, `exec`, `setsid`, `xargs` and `busybox`
//! by judging the program they start, and `find -exec`/`-ok` by judging the program found
//! files are handed to (as well as `find` itself). Shells and wrappers are unwrapped only
//! when they are the system's (a bare name, or a path in `/bin`, `/usr/bin` ...): `./sh -c
//! ls` runs whatever `./sh` is, and is judged as `./sh`.
//!
//! Deliberately conservative: whatever this small parser cannot judge exactly is
//! [`Opaque`], which an allowlist treats as a miss: command or process substitution,
//! subshells, redirections other than to `/dev/null` or between descriptors, here-documents,
//! a program name that the shell would compute (`$CMD`, globs, braces, `~`), a wrapper option
//! it does not know, unbalanced quotes, or shells nested more than four deep. Shell comments
//! are not recognised, which can only make a line look like it runs more, never less.

use std::collections::VecDeque;
use std::iter::Peekable;
use std::str::Chars;

/// Shells whose `-c` script is judged instead of the shell itself.
const SHELLS: [&str; 11] = [
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "fish", "csh", "tcsh",
];
/// How deep `sh -c "sh -c …"` is unwrapped.
const MAX_DEPTH: usize = 4;
/// Words that start or end a shell construct and are not programs.
const KEYWORDS: [&str; 13] = [
    "!", "{", "}", "if", "then", "else", "elif", "fi", "while", "until", "do", "done", "esac",
];

/// Why a command line cannot be judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opaque {
    /// `$(...)`, backticks, `<(...)` or `>(...)`: a command inside an argument.
    Substitution,
    /// `( ... )`: a subshell.
    Subshell,
    /// A redirection to or from a file, or a here-document.
    Redirection,
    /// A program name the shell computes (`$CMD`, a glob, braces, `~`, or empty).
    ComputedProgram,
    /// A wrapper (`env`, `timeout`, `xargs` ...) with an option this parser does not know.
    WrapperOption,
    /// An unclosed quote or a trailing backslash.
    Unbalanced,
    /// Shells nested more than four deep.
    TooDeep,
}

impl Opaque {
    /// What the line does that cannot be judged, as a phrase ("uses command substitution").
    pub fn describe(self) -> &'static str {
        match self {
            Opaque::Substitution => "uses command or process substitution ($(...), `...`, <(...))",
            Opaque::Subshell => "uses a subshell ( ... )",
            Opaque::Redirection => {
                "redirects to or from a file (only /dev/null and descriptor copies are judged)"
            }
            Opaque::ComputedProgram => {
                "runs a program whose name the shell computes ($VAR, a glob, braces or ~)"
            }
            Opaque::WrapperOption => "gives a wrapper command an option that cannot be judged",
            Opaque::Unbalanced => "has an unclosed quote or a trailing backslash",
            Opaque::TooDeep => "nests shells more than four deep",
        }
    }
}

/// One program a command line would start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// The program as written (a bare name is looked up on PATH).
    pub program: String,
    /// Its arguments, quotes removed.
    pub args: Vec<String>,
    /// Names of the environment variables set for it on the line (`NAME=value` prefixes and
    /// `env NAME=value`), in order.
    pub env: Vec<String>,
}

impl Invocation {
    /// The program's file name (`/usr/bin/git` → `git`).
    pub fn base_name(&self) -> &str {
        base_name(&self.program)
    }
}

/// Every program the command line runs, in order, or why it cannot be judged.
pub fn effective_commands(line: &str) -> Result<Vec<Invocation>, Opaque> {
    let mut out = Vec::new();
    collect_line(line, 0, &mut out)?;
    Ok(out)
}

/// The names of the programs the command line runs, or `None` when it cannot be judged.
pub fn effective_programs(line: &str) -> Option<Vec<String>> {
    effective_commands(line)
        .ok()
        .map(|all| all.into_iter().map(|i| i.program).collect())
}

/// Directories whose shells and wrappers are unwrapped when named by path.
const SYSTEM_DIRS: [&str; 6] = [
    "/bin/",
    "/usr/bin/",
    "/usr/local/bin/",
    "/sbin/",
    "/usr/sbin/",
    "/usr/local/sbin/",
];

/// A shell or wrapper is only unwrapped when it is the system's: a bare name (looked up on
/// PATH) or a path in a system directory. `./sh -c ls` or `./env ls` run a file of that name,
/// which may be anything (the agent can write one): such a program is judged as itself.
fn system_program(program: &str) -> bool {
    if !program.contains('/') {
        return true;
    }
    SYSTEM_DIRS.iter().any(|dir| {
        program
            .strip_prefix(dir)
            .is_some_and(|rest| !rest.is_empty() && !rest.contains('/'))
    })
}

/// `/usr/bin/git` → `git`.
pub(crate) fn base_name(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

fn collect_line(line: &str, depth: usize, out: &mut Vec<Invocation>) -> Result<(), Opaque> {
    if depth > MAX_DEPTH {
        return Err(Opaque::TooDeep);
    }
    for words in segments(line)? {
        collect_words(words, depth, out)?;
    }
    Ok(())
}

/// One simple command: keywords and assignments, then the program and its arguments.
fn collect_words(
    words: Vec<String>,
    depth: usize,
    out: &mut Vec<Invocation>,
) -> Result<(), Opaque> {
    let mut words = VecDeque::from(words);
    let mut env = Vec::new();
    while let Some(first) = words.front() {
        if KEYWORDS.contains(&first.as_str()) {
            words.pop_front();
        } else if let Some(name) = assignment(first) {
            env.push(name.to_owned());
            words.pop_front();
        } else {
            break;
        }
    }
    let Some(program) = words.pop_front() else {
        return Ok(());
    };
    invocation(program, Vec::from(words), env, depth, out)
}

fn invocation(
    mut program: String,
    mut args: Vec<String>,
    mut env: Vec<String>,
    depth: usize,
    out: &mut Vec<Invocation>,
) -> Result<(), Opaque> {
    if depth > MAX_DEPTH {
        return Err(Opaque::TooDeep);
    }
    // Wrappers are peeled in a loop, not by recursion, and by moving an index, not by
    // copying: `nice nice nice ...` is as long as the line, and must cost no more than it.
    let mut start = 0;
    loop {
        if program.is_empty()
            || program.starts_with('~')
            || program.contains(['$', '`', '*', '?', '[', ']', '{', '}'])
        {
            return Err(Opaque::ComputedProgram);
        }
        let Some(wrapper) = WRAPPERS
            .iter()
            .find(|w| w.name == base_name(&program) && system_program(&program))
        else {
            break;
        };
        let at = start + wrapper.command_at(&args[start..], &mut env)?;
        match (args.get_mut(at), wrapper.default) {
            (Some(inner), _) => {
                program = std::mem::take(inner);
                start = at + 1;
            }
            (None, Some(default)) => {
                program = default.to_owned();
                start = args.len();
            }
            // The wrapper alone (`env` prints the environment, `nohup` fails).
            (None, None) => {
                start = args.len();
                break;
            }
        }
    }
    let args = args.split_off(start.min(args.len()));
    let base = base_name(&program);
    if SHELLS.contains(&base)
        && system_program(&program)
        && let Some(script) = shell_script(&args)?
    {
        // Variables set for the shell are inherited by everything its script runs (and
        // some, like `ENV` or `BASH_ENV`, make the shell itself run a file first).
        let first = out.len();
        collect_line(script, depth + 1, out)?;
        for inner in &mut out[first..] {
            inner.env.splice(0..0, env.iter().cloned());
        }
        return Ok(());
    }
    let found = if base == "find" {
        find_exec_commands(&args)
    } else {
        Vec::new()
    };
    out.push(Invocation { program, args, env });
    let inherited = out.last().map(|i| i.env.clone()).unwrap_or_default();
    for (inner, inner_args) in found {
        invocation(inner, inner_args, inherited.clone(), depth + 1, out)?;
    }
    Ok(())
}

/// The `-c` script of a shell's arguments: options are read until the first operand; with
/// `-c` among them that operand is the script. `None` when the shell runs a script file or
/// reads stdin (then the shell itself is what runs).
fn shell_script(args: &[String]) -> Result<Option<&str>, Opaque> {
    let mut command_mode = false;
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        if arg == "--" || arg == "-" {
            i += 1;
            break;
        }
        if let Some(long) = arg.strip_prefix("--") {
            // `--rcfile FILE` and `--init-file FILE` take a value; the rest are flags.
            i += if matches!(long, "rcfile" | "init-file") {
                2
            } else {
                1
            };
            continue;
        }
        let Some(cluster) = arg.strip_prefix('-').or_else(|| arg.strip_prefix('+')) else {
            break;
        };
        command_mode |= arg.starts_with('-') && cluster.contains('c');
        // `-o option` / `-O option` take the next word.
        i += if cluster.contains(['o', 'O']) { 2 } else { 1 };
    }
    match (command_mode, args.get(i)) {
        (true, Some(script)) => Ok(Some(script)),
        // `sh -c` without a script is an error for the shell: nothing else runs.
        (true, None) => Err(Opaque::WrapperOption),
        (false, _) => Ok(None),
    }
}

/// The programs `find` hands files to: `-exec cmd ... ;`, `-execdir`, `-ok`, `-okdir`.
fn find_exec_commands(args: &[String]) -> Vec<(String, Vec<String>)> {
    let mut found = Vec::new();
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        if matches!(arg.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") {
            let words: Vec<String> = rest
                .by_ref()
                .take_while(|w| *w != ";" && *w != "+")
                .cloned()
                .collect();
            if let Some((program, inner)) = words.split_first() {
                found.push((program.clone(), inner.to_vec()));
            }
        }
    }
    found
}

/// `NAME` of a `NAME=value` word.
fn assignment(word: &str) -> Option<&str> {
    let (name, _) = word.split_once('=')?;
    let valid = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    valid.then_some(name)
}

/// A command that starts another program after its own options.
struct Wrapper {
    name: &'static str,
    /// Short options without a value.
    flags: &'static str,
    /// Short options whose value is attached or the next word.
    valued: &'static str,
    /// Short options whose value may only be attached (`xargs -i{}`).
    optional: &'static str,
    /// Long options: `name` (no value), `name=` (value attached or next word), `name?`
    /// (value only attached).
    long: &'static [&'static str],
    /// Operands before the program (`timeout DURATION`).
    operands: usize,
    /// `NAME=value` words before the program are assignments (`env`).
    assignments: bool,
    /// What runs when no program is given (`xargs` runs `echo`).
    default: Option<&'static str>,
}

const fn wrapper(name: &'static str) -> Wrapper {
    Wrapper {
        name,
        flags: "",
        valued: "",
        optional: "",
        long: &[],
        operands: 0,
        assignments: false,
        default: None,
    }
}

const WRAPPERS: [Wrapper; 11] = [
    Wrapper {
        flags: "i0v",
        valued: "uC",
        long: &["ignore-environment", "null", "debug", "unset=", "chdir="],
        assignments: true,
        ..wrapper("env")
    },
    Wrapper {
        valued: "n",
        long: &["adjustment="],
        ..wrapper("nice")
    },
    Wrapper {
        flags: "v",
        valued: "sk",
        long: &[
            "preserve-status",
            "foreground",
            "verbose",
            "signal=",
            "kill-after=",
        ],
        operands: 1,
        ..wrapper("timeout")
    },
    wrapper("nohup"),
    Wrapper {
        valued: "ioe",
        long: &["input=", "output=", "error="],
        ..wrapper("stdbuf")
    },
    Wrapper {
        flags: "p",
        ..wrapper("time")
    },
    Wrapper {
        flags: "p",
        ..wrapper("command")
    },
    Wrapper {
        flags: "cl",
        ..wrapper("exec")
    },
    Wrapper {
        flags: "cfw",
        long: &["ctty", "fork", "wait"],
        ..wrapper("setsid")
    },
    Wrapper {
        flags: "0rtpxo",
        valued: "ILnPsdEa",
        optional: "iel",
        long: &[
            "null",
            "no-run-if-empty",
            "verbose",
            "interactive",
            "exit",
            "open-tty",
            "arg-file=",
            "delimiter=",
            "max-args=",
            "max-procs=",
            "max-chars=",
            "process-slot-var=",
            "replace?",
            "eof?",
            "max-lines?",
        ],
        default: Some("echo"),
        ..wrapper("xargs")
    },
    wrapper("busybox"),
];

impl Wrapper {
    /// The index in `args` where the wrapped program is (possibly `args.len()`: none).
    /// Assignments on the way are added to `env`.
    fn command_at(&self, args: &[String], env: &mut Vec<String>) -> Result<usize, Opaque> {
        let mut i = 0;
        while let Some(arg) = args.get(i) {
            if arg == "--" {
                i += 1;
                break;
            }
            if self.name == "env" && arg == "-" {
                i += 1;
                continue;
            }
            if let Some(long) = arg.strip_prefix("--") {
                i += self.long_option(long)?;
                continue;
            }
            let Some(cluster) = arg.strip_prefix('-').filter(|c| !c.is_empty()) else {
                break;
            };
            if self.name == "nice" && cluster.chars().all(|c| c.is_ascii_digit()) {
                i += 1;
                continue;
            }
            i += self.short_options(cluster)?;
        }
        i += self.operands;
        if i > args.len() {
            return Err(Opaque::WrapperOption);
        }
        if self.assignments {
            while let Some(name) = args.get(i).and_then(|a| assignment(a)) {
                env.push(name.to_owned());
                i += 1;
            }
        }
        Ok(i)
    }

    /// How many words a `--name[=value]` option takes.
    fn long_option(&self, long: &str) -> Result<usize, Opaque> {
        let (name, attached) = match long.split_once('=') {
            Some((name, _)) => (name, true),
            None => (long, false),
        };
        for known in self.long {
            if let Some(base) = known.strip_suffix('=') {
                if base == name {
                    return Ok(if attached { 1 } else { 2 });
                }
            } else if known.strip_suffix('?').unwrap_or(known) == name
                && (!attached || known.ends_with('?'))
            {
                return Ok(1);
            }
        }
        Err(Opaque::WrapperOption)
    }

    /// How many words a `-abc` cluster of short options takes.
    fn short_options(&self, cluster: &str) -> Result<usize, Opaque> {
        for (at, c) in cluster.char_indices() {
            if self.flags.contains(c) {
                continue;
            }
            let attached = at + c.len_utf8() < cluster.len();
            if self.valued.contains(c) {
                return Ok(if attached { 1 } else { 2 });
            }
            if self.optional.contains(c) {
                return Ok(1);
            }
            return Err(Opaque::WrapperOption);
        }
        Ok(1)
    }
}

/// Splits a line into simple commands of words, honouring quotes and backslashes.
fn segments(line: &str) -> Result<Vec<Vec<String>>, Opaque> {
    let mut segments = Vec::new();
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next().ok_or(Opaque::Unbalanced)? {
                        '\'' => break,
                        other => word.push(other),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next().ok_or(Opaque::Unbalanced)? {
                        '"' => break,
                        '`' => return Err(Opaque::Substitution),
                        '$' if chars.peek() == Some(&'(') => return Err(Opaque::Substitution),
                        '\\' => match chars.next().ok_or(Opaque::Unbalanced)? {
                            '\n' => {}
                            escaped => word.push(escaped),
                        },
                        other => word.push(other),
                    }
                }
            }
            '\\' => match chars.next().ok_or(Opaque::Unbalanced)? {
                // A line continuation joins the lines.
                '\n' => {}
                escaped => {
                    in_word = true;
                    word.push(escaped);
                }
            },
            '`' => return Err(Opaque::Substitution),
            '$' if chars.peek() == Some(&'(') => return Err(Opaque::Substitution),
            '(' | ')' => return Err(Opaque::Subshell),
            '<' | '>' => {
                // `2>` : the digits are the descriptor, not a word.
                if in_word && word.chars().all(|d| d.is_ascii_digit()) {
                    word.clear();
                    in_word = false;
                }
                redirection(c, &mut chars)?;
            }
            '&' if chars.peek() == Some(&'>') => {
                chars.next();
                if chars.peek() == Some(&'>') {
                    chars.next();
                }
                redirection_target(&mut chars)?;
            }
            ';' | '&' | '|' | '\n' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
                if !words.is_empty() {
                    segments.push(std::mem::take(&mut words));
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            other => {
                in_word = true;
                word.push(other);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    if !words.is_empty() {
        segments.push(words);
    }
    Ok(segments)
}

/// After `<` or `>`: only descriptor copies (`2>&1`, `<&-`) and `/dev/null` are judged.
fn redirection(first: char, chars: &mut Peekable<Chars<'_>>) -> Result<(), Opaque> {
    match (first, chars.peek()) {
        (_, Some('(')) => return Err(Opaque::Substitution),
        // Here-documents and here-strings: their text is data the parser cannot follow.
        ('<', Some('<')) => return Err(Opaque::Redirection),
        ('>', Some('>' | '|')) => {
            chars.next();
        }
        _ => {}
    }
    if chars.peek() == Some(&'&') {
        chars.next();
        let mut descriptor = false;
        while chars.next_if(|d| d.is_ascii_digit() || *d == '-').is_some() {
            descriptor = true;
        }
        return if descriptor {
            Ok(())
        } else {
            Err(Opaque::Redirection)
        };
    }
    redirection_target(chars)
}

fn redirection_target(chars: &mut Peekable<Chars<'_>>) -> Result<(), Opaque> {
    while chars.next_if(|c| *c == ' ' || *c == '\t').is_some() {}
    let mut target = String::new();
    while let Some(c) = chars.next_if(|c| !c.is_whitespace() && !";&|<>()".contains(*c)) {
        target.push(c);
    }
    if target == "/dev/null" {
        Ok(())
    } else {
        Err(Opaque::Redirection)
    }
}
