//! The commands a shell command line would really run: the one analyzer behind exec
//! approvals, for our `exec` tool and for Codex's command approvals (judge the effective
//! command: unwrap `sh -c` and `env`, split chains).
//!
//! The line is parsed with the tree-sitter bash grammar (a superset of the POSIX `sh` that
//! `exec` runs), never with a tokenizer of our own. A line is judged only when its whole tree
//! is made of constructs this module understands exactly:
//!
//! - simple commands of literal words: unquoted words (backslash escapes removed), single
//!   quotes, and double quotes without any expansion inside;
//! - `NAME=value` prefixes with a literal value (the policy decides which names may be set);
//! - `&&`, `||`, `;` and `|` between such commands;
//! - redirections to `/dev/null` and descriptor copies (`2>&1`, `>&-`).
//!
//! Everything else is [`Opaque`], which an allowlist treats as a miss (fail closed): a parse
//! error, a comment, a newline, `&`, here-documents and here-strings, command and process
//! substitution, parameter, arithmetic and brace expansion, ANSI-C (`$'...'`) and locale
//! (`$"..."`) quoting, subshells, groups, `if`/`for`/`while`/`case`, functions, `[[ ]]`,
//! declarations and bare assignments, a program name the shell would compute (a glob, `~`,
//! braces), and quoted text containing `$(` or a backtick (bash builtins such as
//! `printf -v 'a[$(cmd)]'` evaluate it).
//!
//! Wrappers that only start another program are unwrapped when their own options are known:
//! `sh -c` (and `bash`, `dash`, `ash`, `ksh`, `mksh`, `yash`: shells that read no startup file
//! when they run a `-c` script) by parsing their literal script again,
//! `env`, `nice`, `timeout`, `nohup`, `stdbuf`, `time`, `command`, `exec`, `setsid`, `xargs`
//! and `busybox` (whose applet the policy never covers) by judging the program they start,
//! and `find -exec`/`-ok` by judging the program found files are handed to (as well as
//! `find` itself). A wrapper, shell or `find`
//! given a word the shell expands (a glob or braces) is opaque: the expansion could move
//! which word is the program. Shells and wrappers are unwrapped only when they are the
//! system's (a bare name, or a path in `/bin`, `/usr/bin` ...): `./sh -c ls` runs whatever
//! `./sh` is, and is judged as `./sh`.
//!
//! Substitution by a wrapper counts as expansion: a word holding `xargs -I`'s (`-i`,
//! `--replace`) replacement string, or `{}` after `find -exec`/`-execdir`/`-ok`/`-okdir`, is
//! rewritten with text from standard input or a file name before it runs, so a shell script
//! or a program name carrying one is opaque, exactly like a glob there. Words `xargs` appends
//! count too: a wrapper left without its program after `xargs` (`xargs nice`, `xargs xargs`)
//! and `find` after `xargs` (which could be handed `-exec`) are opaque. A shell option that
//! makes the shell read a file first (`-l`, `--login`, `-i`, `--rcfile`, `--init-file`, `-o`
//! / `-O` settings, any `+` form) is [`Opaque::ShellStartupFile`]: the file may be one the
//! agent wrote. Only shell flags harmless in every one of those shells are understood (not
//! bash's `-k`, which moves `NAME=value` arguments into the environment). `zsh`, `fish`, `csh`
//! and `tcsh` read startup files even for `-c` and are never unwrapped. A wrapper's option is
//! understood only when what it does to the program is known: `exec -l` (a login shell) and
//! `env -C` are not; `env -u NAME`, `env -i`, `command -p` and `xargs
//! --process-slot-var=NAME` are reported as changes to the program's environment.

use std::cell::RefCell;

use tree_sitter::{Node, Parser};

/// Shells whose `-c` script is judged instead of the shell itself.
const SHELLS: [&str; 7] = ["sh", "bash", "dash", "ksh", "mksh", "ash", "yash"];
/// Short options of those shells that load nothing, run nothing and change nothing about how
/// the script's words are read, in every one of them. Not here: `-k` (bash, ksh: every
/// `NAME=value` word anywhere on a command line goes into that command's environment, so
/// `ls LD_PRELOAD=x.so` would set it), `-E` (ksh93 reads `$ENV` or `~/.kshrc` even for a
/// script), `-T` (mksh opens the next word as its terminal), `-p` (ksh reads
/// `/etc/suid_profile`).
const SHELL_FLAGS: &str = "abcefhmnrstuvxBCHP";
/// Long options of those shells that load nothing.
const SHELL_LONG: [&str; 4] = ["norc", "noprofile", "posix", "noediting"];
/// How deep `sh -c "sh -c …"` is unwrapped.
const MAX_DEPTH: usize = 4;

/// Why a command line cannot be judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opaque {
    /// Not valid shell syntax.
    Syntax,
    /// A `#` comment: text after it is invisible to the shell, and hiding things there is
    /// how analyzers are fooled.
    Comment,
    /// More than one line.
    Newline,
    /// A control character (NUL, escape ...) the shell and a reader may see differently.
    ControlCharacter,
    /// A character beyond the Basic Multilingual Plane (an emoji, say): the bash grammar's
    /// scanner is known to crash on some of them, so such lines are never parsed.
    Unparsed,
    /// `cmd &`: something runs in the background.
    Background,
    /// `$(...)`, backticks, `<(...)` or `>(...)`: a command inside an argument.
    Substitution,
    /// `$VAR`, `${...}`, `$((...))` or `{a,b}`: text the shell computes.
    Expansion,
    /// `$'...'` or `$"..."`: quoting whose result the shell computes.
    SpecialQuoting,
    /// Quoted text containing `$(` or a backtick, which bash builtins can run.
    SubstitutionText,
    /// A redirection to or from a file other than `/dev/null`.
    Redirection,
    /// A here-document or here-string.
    HereDocument,
    /// A compound construct (subshell, group, `if`, loop, function, `[[ ]]`, declaration,
    /// bare assignment ...), with a readable name of it.
    Construct(&'static str),
    /// A program name the shell computes (a glob, braces, `~`, or empty).
    ComputedProgram,
    /// A wrapper (`env`, `timeout`, `xargs` ...) or shell with an option this analyzer does
    /// not know, or without the program it should start.
    WrapperOption,
    /// A wrapper, shell or `find` given a word that is expanded or substituted before it
    /// runs (a glob, braces, `xargs -I`'s replacement string, `find`'s `{}`).
    WrapperExpansion,
    /// Shells nested more than four deep.
    TooDeep,
    /// A shell option that makes the shell read a startup file first (`-l`, `--login`, `-i`,
    /// `--rcfile`, `--init-file`), or changes settings a reader cannot follow (`-o`, `-O`,
    /// `+` forms).
    ShellStartupFile,
}

impl Opaque {
    /// What the line does that cannot be judged, as a phrase ("uses command substitution").
    pub fn describe(self) -> String {
        match self {
            Opaque::Syntax => "is not valid shell syntax".to_owned(),
            Opaque::Comment => "contains a shell comment (#)".to_owned(),
            Opaque::Newline => "spans more than one line".to_owned(),
            Opaque::ControlCharacter => "contains a control character".to_owned(),
            Opaque::Unparsed => {
                "contains a character outside the Basic Multilingual Plane (an emoji or a rare \
                 script), which is not judged"
                    .to_owned()
            }
            Opaque::Background => "runs something in the background (&)".to_owned(),
            Opaque::Substitution => {
                "uses command or process substitution ($(...), `...`, <(...))".to_owned()
            }
            Opaque::Expansion => {
                "uses parameter, arithmetic or brace expansion ($VAR, ${...}, $((...)), {a,b})"
                    .to_owned()
            }
            Opaque::SpecialQuoting => "uses ANSI-C or locale quoting ($'...', $\"...\")".to_owned(),
            Opaque::SubstitutionText => {
                "passes quoted text containing $( or a backtick, which a shell can still run"
                    .to_owned()
            }
            Opaque::Redirection => {
                "redirects to or from a file (only /dev/null and descriptor copies are judged)"
                    .to_owned()
            }
            Opaque::HereDocument => "uses a here-document or here-string".to_owned(),
            Opaque::Construct(name) => {
                format!("uses a shell construct that is not judged ({name})")
            }
            Opaque::ComputedProgram => {
                "runs a program whose name the shell computes (a glob, braces, ~ or empty)"
                    .to_owned()
            }
            Opaque::WrapperOption => {
                "gives a wrapper command or shell an option that cannot be judged".to_owned()
            }
            Opaque::WrapperExpansion => {
                "gives a wrapper command, shell or find a word that is expanded or substituted \
                 before it runs (a glob, braces, an xargs -I placeholder, find's {})"
                    .to_owned()
            }
            Opaque::TooDeep => "nests shells more than four deep".to_owned(),
            Opaque::ShellStartupFile => {
                "starts a shell with an option that reads a startup file or changes its \
                 settings (-l, --login, -i, --rcfile, --init-file, -o, -O, +...)"
                    .to_owned()
            }
        }
    }
}

/// A readable name for a grammar kind.
fn construct_name(kind: &str) -> &'static str {
    match kind {
        "subshell" => "a subshell ( ... )",
        "compound_statement" => "a command group { ... }",
        "if_statement" => "if",
        "while_statement" => "a while or until loop",
        "for_statement" | "c_style_for_statement" => "a for loop",
        "case_statement" => "case",
        "function_definition" => "a function definition",
        "negated_command" => "a negated command (!)",
        "test_command" => "a test [[ ... ]]",
        "declaration_command" => "a declaration (export, local, declare ...)",
        "unset_command" => "unset",
        "variable_assignment" | "variable_assignments" => "a variable assignment",
        "array" => "an array",
        ";;" | ";&" | ";;&" => "a case terminator",
        "|&" => "a pipe of standard error (|&)",
        _ => "an operator or construct outside the judged set",
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
    /// `env NAME=value`), or changed by a wrapper (`env -u NAME`, `xargs
    /// --process-slot-var=NAME`; `PATH` for `env -i` and `command -p`, which look the program
    /// up elsewhere than on the `PATH` it is judged with), in order. A locale, terminal or
    /// time-zone variable set to a path shows as `NAME to a path` (see `assigned`).
    pub env: Vec<String>,
    /// The arguments are not all known from the line: the shell expands a glob or braces
    /// among them, or a wrapper (`xargs`, `find -exec`) adds or substitutes words.
    pub args_vary: bool,
    /// The shells, wrappers and `find` unwrapped on the way to it, as written, each once
    /// (`env`, `/bin/sh`, `find`): they run too, so a bare name of a shell or wrapper among
    /// them must be the system's (`find` is judged as a program of its own).
    pub through: Vec<String>,
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

/// The script of a command line that is exactly `<shell> -lc <script>` with a system `bash`,
/// `zsh` or `sh` and literal words: the form in which Codex runs every command the model asks
/// for. `None` for anything else. The caller decides whether the login shell's startup files
/// can be trusted (they are outside every workspace); this only finds the script.
pub fn login_shell_script(line: &str) -> Option<String> {
    let commands = simple_commands(line).ok()?;
    let [only] = commands.as_slice() else {
        return None;
    };
    if !only.env.is_empty() {
        return None;
    }
    match only.words.as_slice() {
        [shell, flag, script]
            if !shell.expands
                && !flag.expands
                && !script.expands
                && matches!(base_name(&shell.text), "bash" | "zsh" | "sh")
                && shell.text.starts_with('/')
                && system_program(&shell.text)
                && flag.text == "-lc" =>
        {
            Some(script.text.clone())
        }
        _ => None,
    }
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
pub(crate) fn system_program(program: &str) -> bool {
    if !program.contains('/') {
        return true;
    }
    SYSTEM_DIRS.iter().any(|dir| {
        program
            .strip_prefix(dir)
            .is_some_and(|rest| !rest.is_empty() && !rest.contains('/'))
    })
}

/// Whether `name` (a file name) is a shell this module unwraps.
pub(crate) fn is_shell(name: &str) -> bool {
    SHELLS.contains(&name)
}

/// Whether `name` (a file name) is a wrapper this module unwraps (`env`, `xargs` ...).
pub(crate) fn is_wrapper(name: &str) -> bool {
    WRAPPERS.iter().any(|w| w.name == name)
}

/// `/usr/bin/git` → `git`.
pub(crate) fn base_name(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

/// One word after quote removal.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Word {
    text: String,
    /// The shell may turn it into other or several words (an unquoted glob or brace).
    expands: bool,
}

/// One simple command: its `NAME=value` prefixes and its words.
#[derive(Debug, Default)]
struct Simple {
    env: Vec<String>,
    words: Vec<Word>,
}

thread_local! {
    /// Parsers are not shareable between threads; one per thread is reused.
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

/// Parses `line` into its simple commands, or says why it cannot be judged.
fn simple_commands(line: &str) -> Result<Vec<Simple>, Opaque> {
    // Checked before parsing: a newline separates commands, and a carriage return is a
    // character the grammar and the shell could disagree about.
    if line.contains(['\n', '\r']) {
        return Err(Opaque::Newline);
    }
    if line.chars().any(|c| c.is_control() && c != '\t') {
        return Err(Opaque::ControlCharacter);
    }
    // tree-sitter-bash 0.25's external scanner reads out of bounds on some inputs with
    // four-byte UTF-8 characters (`{` followed by U+31860 crashes the process); no such line
    // reaches the parser.
    if line.chars().any(|c| u32::from(c) > 0xFFFF) {
        return Err(Opaque::Unparsed);
    }
    PARSER.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            let mut parser = Parser::new();
            parser
                .set_language(&tree_sitter_bash::LANGUAGE.into())
                .map_err(|_| Opaque::Syntax)?;
            *slot = Some(parser);
        }
        let parser = slot.as_mut().ok_or(Opaque::Syntax)?;
        let tree = parser.parse(line, None).ok_or(Opaque::Syntax)?;
        let root = tree.root_node();
        // Comments first: they are what hides a second command from a reader.
        let mut out = Vec::new();
        walk(root, line, &mut out)?;
        if root.has_error() {
            return Err(Opaque::Syntax);
        }
        Ok(out)
    })
}

/// Walks the statements under `root` in source order (with an explicit stack: a line of
/// ten thousand `&&` nests that deep and must not overflow ours).
fn walk(root: Node<'_>, src: &str, out: &mut Vec<Simple>) -> Result<(), Opaque> {
    reject_comments(root)?;
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
        match node.kind() {
            "program" => {
                operators(&children, &[";"])?;
                push_statements(&mut stack, &children);
            }
            "list" => {
                operators(&children, &["&&", "||"])?;
                push_statements(&mut stack, &children);
            }
            "pipeline" => {
                operators(&children, &["|"])?;
                push_statements(&mut stack, &children);
            }
            "redirected_statement" => {
                let mut body = Vec::new();
                for child in &children {
                    match child.kind() {
                        "file_redirect" => redirect(*child, src)?,
                        "heredoc_redirect" | "herestring_redirect" => {
                            return Err(Opaque::HereDocument);
                        }
                        _ if child.is_named() => body.push(*child),
                        _ => return Err(Opaque::Syntax),
                    }
                }
                stack.extend(body.into_iter().rev());
            }
            "command" => out.push(simple(&children, src)?),
            other => return Err(refusal_for(other)),
        }
    }
    Ok(())
}

/// Statements are named children; they are pushed so that the first is handled first.
fn push_statements<'t>(stack: &mut Vec<Node<'t>>, children: &[Node<'t>]) {
    stack.extend(children.iter().rev().filter(|c| c.is_named()).copied());
}

/// The operators between the statements of a program, list or pipeline must be `allowed`.
fn operators(children: &[Node<'_>], allowed: &[&str]) -> Result<(), Opaque> {
    for child in children.iter().filter(|c| !c.is_named()) {
        match child.kind() {
            kind if allowed.contains(&kind) => {}
            "&" => return Err(Opaque::Background),
            kind => return Err(Opaque::Construct(construct_name(kind))),
        }
    }
    Ok(())
}

/// Any comment anywhere in the tree.
fn reject_comments(root: Node<'_>) -> Result<(), Opaque> {
    let mut cursor = root.walk();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if node.kind() == "comment" {
            return Err(Opaque::Comment);
        }
        stack.extend(node.children(&mut cursor));
    }
    Ok(())
}

/// The refusal for a node kind that is not a simple command.
fn refusal_for(kind: &str) -> Opaque {
    match kind {
        "command_substitution" | "process_substitution" => Opaque::Substitution,
        "simple_expansion" | "expansion" | "arithmetic_expansion" | "brace_expression" => {
            Opaque::Expansion
        }
        "ansi_c_string" | "translated_string" => Opaque::SpecialQuoting,
        "heredoc_redirect" | "herestring_redirect" | "heredoc_body" => Opaque::HereDocument,
        "comment" => Opaque::Comment,
        "ERROR" => Opaque::Syntax,
        other => Opaque::Construct(construct_name(other)),
    }
}

/// `2>&1`, `>&-`, `>/dev/null`, `&>/dev/null`: judged; any other redirection is opaque.
fn redirect(node: Node<'_>, src: &str) -> Result<(), Opaque> {
    let mut cursor = node.walk();
    let mut operator = None;
    let mut target = None;
    for child in node.children(&mut cursor) {
        match child.kind() {
            "file_descriptor" => {}
            kind if !child.is_named() => operator = Some(kind),
            _ if target.is_none() => target = Some(child),
            _ => return Err(Opaque::Redirection),
        }
    }
    let Some(operator) = operator else {
        return Err(Opaque::Redirection);
    };
    match (operator, target) {
        // `>&-` closes a descriptor; the operator token carries the dash.
        (">&-" | "<&-", None) => Ok(()),
        (">&" | "<&", Some(t)) if t.kind() == "number" => Ok(()),
        (">&" | "<&", Some(t)) if text(t, src) == "-" => Ok(()),
        (">" | ">>" | "&>" | "&>>" | ">|" | "<", Some(t)) => {
            match literal(t, src).map_err(|_| Opaque::Redirection)? {
                Word {
                    text,
                    expands: false,
                } if text == "/dev/null" => Ok(()),
                _ => Err(Opaque::Redirection),
            }
        }
        _ => Err(Opaque::Redirection),
    }
}

/// A `command` node: assignments, the command name and its arguments, all literal.
fn simple(children: &[Node<'_>], src: &str) -> Result<Simple, Opaque> {
    let mut command = Simple::default();
    for child in children {
        match child.kind() {
            "variable_assignment" if command.words.is_empty() => {
                command.env.push(assignment(*child, src)?);
            }
            "command_name" => {
                let mut cursor = child.walk();
                let parts: Vec<Node<'_>> = child.children(&mut cursor).collect();
                let [name] = parts.as_slice() else {
                    return Err(Opaque::ComputedProgram);
                };
                // `$CMD args`: the shell computes which program runs.
                let name = literal(*name, src).map_err(|e| match e {
                    Opaque::Expansion => Opaque::ComputedProgram,
                    other => other,
                })?;
                command.words.push(name);
            }
            "herestring_redirect" | "heredoc_redirect" => return Err(Opaque::HereDocument),
            "file_redirect" => redirect(*child, src)?,
            _ if child.is_named() => command.words.push(literal(*child, src)?),
            _ => return Err(refusal_for(child.kind())),
        }
    }
    if command.words.is_empty() {
        // Only assignments: they change what later commands see (`PATH=...`).
        return Err(Opaque::Construct(construct_name("variable_assignment")));
    }
    Ok(command)
}

/// `NAME=literal` before a command: its name.
fn assignment(node: Node<'_>, src: &str) -> Result<String, Opaque> {
    let mut cursor = node.walk();
    let mut name = None;
    let mut value = String::new();
    for child in node.children(&mut cursor) {
        match child.kind() {
            "variable_name" if name.is_none() => name = Some(text(child, src).to_owned()),
            "=" => {}
            "array" => return Err(Opaque::Construct(construct_name("array"))),
            _ if child.is_named() => {
                value = literal(child, src)?.text;
            }
            // `+=` and subscripts (`a[$(cmd)]=x`) are not judged.
            _ => return Err(Opaque::Construct(construct_name("variable_assignment"))),
        }
    }
    let name = name.ok_or(Opaque::Construct(construct_name("variable_assignment")))?;
    Ok(assigned(name, &value))
}

/// How an assignment is reported in [`Invocation::env`]: its name, or `NAME to a path` when
/// a locale, terminal or time-zone variable is set to a file of the line's choosing. glibc loads a
/// locale named by an absolute path (`LC_ALL=/tmp/x`) and a time zone by a path relative to
/// the zone directory (`TZ=../../tmp/x`), and trusts what it finds there; a zone name such as
/// `Europe/Paris` stays a name.
fn assigned(name: String, value: &str) -> String {
    // `TERM` names a terminal description too, which ncurses looks up by that name.
    let locale = name == "LANG" || name == "LANGUAGE" || name == "TERM" || name.starts_with("LC_");
    let zone = name == "TZ";
    let zone_path = value.trim_start_matches(':');
    let a_path = (locale && value.contains('/'))
        || (zone && (zone_path.starts_with('/') || zone_path.split('/').any(|part| part == "..")));
    if a_path {
        format!("{name} to a path")
    } else {
        name
    }
}

fn text<'s>(node: Node<'_>, src: &'s str) -> &'s str {
    src.get(node.byte_range()).unwrap_or("")
}

/// The value of a literal word node after quote removal, or why it is not literal.
fn literal(node: Node<'_>, src: &str) -> Result<Word, Opaque> {
    let mut shape = String::new();
    let mut word = literal_part(node, src, &mut shape)?;
    word.expands |= brace_expands(&shape);
    if word.text.contains("$(") || word.text.contains('`') {
        return Err(Opaque::SubstitutionText);
    }
    Ok(word)
}

/// One part of a word. `shape` receives the part as the shell sees it for brace expansion:
/// unquoted characters as they are, quoted or escaped ones as `q`.
fn literal_part(node: Node<'_>, src: &str, shape: &mut String) -> Result<Word, Opaque> {
    let word = match node.kind() {
        "word" | "number" => unquoted(text(node, src), shape)?,
        "raw_string" => {
            let raw = text(node, src);
            let inner = raw
                .strip_prefix('\'')
                .and_then(|r| r.strip_suffix('\''))
                .ok_or(Opaque::Syntax)?;
            shape.extend(inner.chars().map(|_| 'q'));
            Word {
                text: inner.to_owned(),
                expands: false,
            }
        }
        "string" => {
            let word = double_quoted(node, src)?;
            shape.extend(word.text.chars().map(|_| 'q'));
            word
        }
        "concatenation" => {
            let mut cursor = node.walk();
            let mut joined = Word {
                text: String::new(),
                expands: false,
            };
            for part in node.children(&mut cursor) {
                if !part.is_named() {
                    return Err(refusal_for(part.kind()));
                }
                let piece = literal_part(part, src, shape)?;
                joined.text.push_str(&piece.text);
                joined.expands |= piece.expands;
            }
            joined
        }
        other => return Err(refusal_for(other)),
    };
    Ok(word)
}

/// Whether an unquoted `{...}` holds a comma or `..`: bash's brace expansion (`{a,b}`,
/// `{1..3}`). `{}` and `-I{}` stay literal.
fn brace_expands(shape: &str) -> bool {
    let mut open: Vec<usize> = Vec::new();
    for (at, c) in shape.char_indices() {
        match c {
            '{' => open.push(at),
            '}' => {
                if let Some(start) = open.pop() {
                    let inside = &shape[start + 1..at];
                    if inside.contains(',') || inside.contains("..") {
                        return true;
                    }
                }
            }
            _ => {}
        }
    }
    false
}

/// An unquoted word: backslashes escape the next character; `$` and backticks would expand;
/// unescaped `*`, `?` and `[` are globs.
fn unquoted(raw: &str, shape: &mut String) -> Result<Word, Opaque> {
    let mut text = String::with_capacity(raw.len());
    let mut expands = false;
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                text.push(chars.next().ok_or(Opaque::Syntax)?);
                shape.push('q');
            }
            '$' => return Err(Opaque::Expansion),
            '`' => return Err(Opaque::Substitution),
            '*' | '?' | '[' => {
                expands = true;
                text.push(c);
                shape.push(c);
            }
            other => {
                text.push(other);
                shape.push(other);
            }
        }
    }
    Ok(Word { text, expands })
}

/// `"..."` with only literal content inside: `\"`, `\\`, `\$` and `` \` `` are escapes.
fn double_quoted(node: Node<'_>, src: &str) -> Result<Word, Opaque> {
    let mut cursor = node.walk();
    let mut out = String::new();
    for part in node.children(&mut cursor) {
        match part.kind() {
            "\"" => {}
            "string_content" => {
                let mut chars = text(part, src).chars().peekable();
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => match chars.peek() {
                            Some(&next @ ('"' | '\\' | '$' | '`')) => {
                                out.push(next);
                                chars.next();
                            }
                            _ => out.push('\\'),
                        },
                        '$' => return Err(Opaque::Expansion),
                        '`' => return Err(Opaque::Substitution),
                        other => out.push(other),
                    }
                }
            }
            "$" => return Err(Opaque::Expansion),
            other => return Err(refusal_for(other)),
        }
    }
    Ok(Word {
        text: out,
        expands: false,
    })
}

fn collect_line(line: &str, depth: usize, out: &mut Vec<Invocation>) -> Result<(), Opaque> {
    if depth > MAX_DEPTH {
        return Err(Opaque::TooDeep);
    }
    for command in simple_commands(line)? {
        invocation(command.words, command.env, depth, out)?;
    }
    Ok(())
}

fn invocation(
    words: Vec<Word>,
    mut env: Vec<String>,
    depth: usize,
    out: &mut Vec<Invocation>,
) -> Result<(), Opaque> {
    if depth > MAX_DEPTH {
        return Err(Opaque::TooDeep);
    }
    let mut words = words.into_iter();
    let Some(first) = words.next() else {
        return Ok(());
    };
    let mut program = first;
    let mut args: Vec<Word> = words.collect();
    let mut first_expanding = args.iter().position(|a| a.expands);
    // `xargs` adds words from its input to whatever it starts.
    let mut via_xargs = false;
    let mut through: Vec<String> = Vec::new();
    // Wrappers are peeled in a loop, not by recursion, and by moving an index, not by
    // copying: `nice nice nice ...` is as long as the line, and must cost no more than it.
    let mut start = 0;
    loop {
        if program.expands
            || program.text.is_empty()
            || program.text.starts_with('~')
            || program
                .text
                .contains(['$', '`', '*', '?', '[', ']', '{', '}'])
        {
            return Err(Opaque::ComputedProgram);
        }
        let Some(wrapper) = WRAPPERS
            .iter()
            .find(|w| w.name == base_name(&program.text) && system_program(&program.text))
        else {
            break;
        };
        if first_expanding.is_some_and(|at| at >= start) {
            return Err(Opaque::WrapperExpansion);
        }
        let mut replace = None;
        let at = start + wrapper.command_at(&args[start..], &mut env, &mut replace)?;
        // After `xargs`, a wrapper without its program gets one from the input
        // (`echo rm | xargs nice`, or `xargs xargs`).
        if via_xargs && at >= args.len() {
            return Err(Opaque::WrapperExpansion);
        }
        via_xargs |= wrapper.name == "xargs";
        if let Some(placeholder) = replace {
            // Every word holding the replacement string is rewritten with input text.
            for (offset, word) in args.iter_mut().enumerate().skip(at) {
                if word.text.contains(placeholder.as_str()) {
                    word.expands = true;
                    first_expanding = Some(first_expanding.map_or(offset, |f| f.min(offset)));
                }
            }
        }
        if (at < args.len() || wrapper.default.is_some()) && !through.contains(&program.text) {
            through.push(program.text.clone());
        }
        match (args.get_mut(at), wrapper.default) {
            (Some(inner), _) => {
                program = std::mem::replace(
                    inner,
                    Word {
                        text: String::new(),
                        expands: false,
                    },
                );
                start = at + 1;
            }
            (None, Some(default)) => {
                program = Word {
                    text: default.to_owned(),
                    expands: false,
                };
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
    let base = base_name(&program.text);
    let shell = SHELLS.contains(&base) && system_program(&program.text);
    if (shell || base == "find") && args.iter().any(|a| a.expands) {
        return Err(Opaque::WrapperExpansion);
    }
    // Words `xargs` appends to `find` may be `-exec PROGRAM ... ;`.
    if base == "find" && via_xargs {
        return Err(Opaque::WrapperExpansion);
    }
    let args_vary = via_xargs || args.iter().any(|a| a.expands);
    let args: Vec<String> = args.into_iter().map(|w| w.text).collect();
    if shell && let Some(script) = shell_script(&args)? {
        // Variables set for the shell are inherited by everything its script runs (and
        // some, like `ENV` or `BASH_ENV`, make the shell itself run a file first).
        let first = out.len();
        collect_line(script, depth + 1, out)?;
        if !through.contains(&program.text) {
            through.push(program.text.clone());
        }
        for inner in &mut out[first..] {
            inner.env.splice(0..0, env.iter().cloned());
            for outer in through.iter().rev() {
                if !inner.through.contains(outer) {
                    inner.through.insert(0, outer.clone());
                }
            }
        }
        return Ok(());
    }
    let found = if base == "find" {
        find_exec_commands(&args)
    } else {
        Vec::new()
    };
    out.push(Invocation {
        program: program.text,
        args,
        env,
        args_vary,
        through,
    });
    let inherited = out.last().map(|i| i.env.clone()).unwrap_or_default();
    // What `find` starts it starts itself, from PATH: it is on the way too (a builtin's name
    // there is a file, not the shell's builtin).
    let runner: Vec<String> = out
        .last()
        .map(|i| {
            let mut all = i.through.clone();
            if !all.contains(&i.program) {
                all.push(i.program.clone());
            }
            all
        })
        .unwrap_or_default();
    for words in found {
        let first = out.len();
        invocation(words, inherited.clone(), depth + 1, out)?;
        for inner in &mut out[first..] {
            for outer in runner.iter().rev() {
                if !inner.through.contains(outer) {
                    inner.through.insert(0, outer.clone());
                }
            }
        }
    }
    Ok(())
}

/// The `-c` script of a shell's arguments: options are read until the first operand; with
/// `-c` among them that operand is the script. `None` when the shell runs a script file or
/// reads stdin (then the shell itself is what runs). An option that loads a file or changes
/// settings is refused whatever the mode.
fn shell_script(args: &[String]) -> Result<Option<&str>, Opaque> {
    let mut command_mode = false;
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        if arg == "--" || arg == "-" {
            i += 1;
            break;
        }
        if let Some(long) = arg.strip_prefix("--") {
            if SHELL_LONG.contains(&long) {
                i += 1;
                continue;
            }
            let name = long.split_once('=').map_or(long, |(name, _)| name);
            // Abbreviations count: bash accepts `--rcf` for `--rcfile`.
            let loads = ["rcfile", "init-file", "login"]
                .iter()
                .any(|known| !name.is_empty() && known.starts_with(name));
            return Err(if loads {
                Opaque::ShellStartupFile
            } else {
                Opaque::WrapperOption
            });
        }
        if arg.starts_with('+') && arg.len() > 1 {
            return Err(Opaque::ShellStartupFile);
        }
        let Some(cluster) = arg.strip_prefix('-') else {
            break;
        };
        for c in cluster.chars() {
            if !SHELL_FLAGS.contains(c) {
                return Err(if "iloO".contains(c) {
                    Opaque::ShellStartupFile
                } else {
                    Opaque::WrapperOption
                });
            }
        }
        command_mode |= cluster.contains('c');
        i += 1;
    }
    match (command_mode, args.get(i)) {
        (true, Some(script)) => Ok(Some(script)),
        // `sh -c` without a script is an error for the shell: nothing else runs.
        (true, None) => Err(Opaque::WrapperOption),
        (false, _) => Ok(None),
    }
}

/// The programs `find` hands files to: `-exec cmd ... ;`, `-execdir`, `-ok`, `-okdir`, as
/// words; a word holding `{}` is rewritten with each file name, so it counts as expanding.
fn find_exec_commands(args: &[String]) -> Vec<Vec<Word>> {
    let mut found = Vec::new();
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        if matches!(arg.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") {
            // `-execdir` and `-okdir` run from each file's directory: a relative program
            // path there names a file that depends on the directory, like a computed name.
            let in_file_dir = arg.ends_with("dir");
            let mut words: Vec<Word> = rest
                .by_ref()
                .take_while(|w| *w != ";" && *w != "+")
                .map(|text| Word {
                    text: text.clone(),
                    expands: text.contains("{}"),
                })
                .collect();
            if let Some(program) = words.first_mut()
                && in_file_dir
                && program.text.contains('/')
                && !program.text.starts_with('/')
            {
                program.expands = true;
            }
            if !words.is_empty() {
                found.push(words);
            }
        }
    }
    found
}

/// The replacement string an `xargs` option cluster sets: `-I R` / `-IR`, `-iR`, or `{}` for a
/// bare `-i`. `next` is the word after the cluster.
fn xargs_replace(cluster: &str, next: Option<&str>) -> Option<String> {
    for (at, c) in cluster.char_indices() {
        let rest = &cluster[at + c.len_utf8()..];
        match c {
            'I' if rest.is_empty() => return next.map(str::to_owned),
            'I' => return Some(rest.to_owned()),
            'i' if rest.is_empty() => return Some("{}".to_owned()),
            'i' => return Some(rest.to_owned()),
            // The other valued and optional options end the cluster.
            c if "LnPsdEael".contains(c) => return None,
            _ => {}
        }
    }
    None
}

/// `NAME` of a `NAME=value` word (an `env` argument).
fn assignment_word(word: &str) -> Option<&str> {
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
    // No `-C`/`--chdir`: a program named by a relative path would run from elsewhere than
    // the directory it is judged in.
    Wrapper {
        flags: "i0v",
        valued: "u",
        long: &["ignore-environment", "null", "debug", "unset="],
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
    // `command -p` looks the program up on a default PATH, not the one it is judged with:
    // it counts as setting `PATH` (see `Wrapper::short_environment`).
    Wrapper {
        flags: "p",
        ..wrapper("command")
    },
    // No `-l`: bash's `exec -l` starts the program as a login shell would be (`-` before its
    // name), and a shell started so reads the profile files. No `-a NAME` for the same
    // reason.
    Wrapper {
        flags: "c",
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
    /// Assignments on the way are added to `env`; `xargs`'s replacement string (`-I R`,
    /// `-iR`, `--replace=R`, `{}` by default) is stored in `replace`.
    fn command_at(
        &self,
        args: &[Word],
        env: &mut Vec<String>,
        replace: &mut Option<String>,
    ) -> Result<usize, Opaque> {
        let mut i = 0;
        while let Some(arg) = args.get(i).map(|w| w.text.as_str()) {
            if arg == "--" {
                i += 1;
                break;
            }
            if self.name == "env" && arg == "-" {
                // Like `-i`: the environment is emptied.
                env.push("PATH".to_owned());
                i += 1;
                continue;
            }
            if let Some(long) = arg.strip_prefix("--") {
                if self.name == "xargs" && (long == "replace" || long.starts_with("replace=")) {
                    let value = long.strip_prefix("replace=").unwrap_or("{}");
                    *replace = Some(value.to_owned());
                }
                let taken = self.long_option(long)?;
                let next = args.get(i + 1).map(|w| w.text.as_str());
                self.long_environment(long, next, env);
                i += taken;
                continue;
            }
            let Some(cluster) = arg.strip_prefix('-').filter(|c| !c.is_empty()) else {
                break;
            };
            if self.name == "nice" && cluster.chars().all(|c| c.is_ascii_digit()) {
                i += 1;
                continue;
            }
            let taken = self.short_options(cluster)?;
            self.short_environment(cluster, args.get(i + 1).map(|w| w.text.as_str()), env);
            if self.name == "xargs" {
                let next = args.get(i + 1).map(|w| w.text.as_str());
                if let Some(value) = xargs_replace(cluster, next) {
                    *replace = Some(value);
                }
            }
            i += taken;
        }
        i += self.operands;
        if i > args.len() {
            return Err(Opaque::WrapperOption);
        }
        if self.assignments {
            while let Some(arg) = args.get(i)
                && let Some(name) = assignment_word(&arg.text)
            {
                let value = &arg.text[name.len() + 1..];
                env.push(assigned(name.to_owned(), value));
                i += 1;
            }
        }
        Ok(i)
    }

    /// The variables a cluster of short options changes for the program, added to `env`:
    /// `env -u NAME` unsets one, `env -i` empties the environment and `command -p` searches
    /// a default path, which both change the `PATH` the program is found on. A variable
    /// removed is as much a change as one set: `env -u PATH ls` runs whatever `ls` the
    /// default path finds, not the one judged. `next` is the word after the cluster.
    fn short_environment(&self, cluster: &str, next: Option<&str>, env: &mut Vec<String>) {
        for (at, c) in cluster.char_indices() {
            match (self.name, c) {
                ("env", 'i') | ("command", 'p') => env.push("PATH".to_owned()),
                ("env", 'u') => {
                    let rest = &cluster[at + c.len_utf8()..];
                    let name = if rest.is_empty() { next } else { Some(rest) };
                    if let Some(name) = name {
                        env.push(name.to_owned());
                    }
                    return;
                }
                // A valued option ends the cluster.
                _ if self.valued.contains(c) || self.optional.contains(c) => return,
                _ => {}
            }
        }
    }

    /// [`Self::short_environment`] for a long option: `env --unset=NAME`,
    /// `env --ignore-environment`, and `xargs --process-slot-var=NAME`, which sets NAME for
    /// every program it starts (`--process-slot-var=PATH ls` looks `ls` up in `./0`).
    fn long_environment(&self, long: &str, next: Option<&str>, env: &mut Vec<String>) {
        let (name, attached) = match long.split_once('=') {
            Some((name, value)) => (name, Some(value)),
            None => (long, None),
        };
        match (self.name, name) {
            ("env", "ignore-environment") => env.push("PATH".to_owned()),
            ("env", "unset") | ("xargs", "process-slot-var") => {
                if let Some(value) = attached.or(next) {
                    env.push(value.to_owned());
                }
            }
            _ => {}
        }
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

#[cfg(test)]
mod login_shell_tests {
    use super::login_shell_script;

    #[test]
    fn only_codexs_exact_login_shell_form_is_unwrapped() {
        assert_eq!(
            login_shell_script("/bin/bash -lc 'touch a.txt'").as_deref(),
            Some("touch a.txt")
        );
        for other in [
            "bash -lc 'touch a.txt'",
            "/bin/bash -lc 'a' extra",
            "/bin/bash -c 'a'",
            "/bin/bash --rcfile x -lc 'a'",
            "./bash -lc 'a'",
            "/tmp/bash -lc 'a'",
            "BASH_ENV=x /bin/bash -lc 'a'",
            "/bin/bash -lc a; ls",
            "/bin/bash -lc *",
        ] {
            assert_eq!(login_shell_script(other), None, "{other}");
        }
    }
}
