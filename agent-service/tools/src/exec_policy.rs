//! Exec approvals: whether a command may run, from `tools.exec.security`, `ask`,
//! `askFallback`, `safeBins` and `safeBinProfiles` (per agent: `agents.list[].tools.exec` over
//! `tools.exec`, key by key, and the legacy `tools.bash` filling what is still unset), and the
//! agent's allowlist entries (`tools.exec.allowlist` and the approvals file,
//! [`crate::exec_approvals`]). One policy for
//! our `exec` tool and for the Codex harness's command approvals.
//!
//! Defaults, with nothing configured: `security: allowlist`, `ask: on-miss`,
//! `askFallback: deny`: usable with a person in the loop, safe without one.
//!
//! | `security` | `ask` | a command the allowlist covers | a command it does not cover |
//! |---|---|---|---|
//! | `deny` | any | refused | refused |
//! | `allowlist` | `off` | runs | refused |
//! | `allowlist` | `on-miss` | runs | ask |
//! | `allowlist` | `always` | ask | ask |
//! | `full` | `off` / `on-miss` | runs | runs |
//! | `full` | `always` | ask | ask |
//!
//! "Ask" waits for a person ([`crate::approval`]); where nobody can be asked or nobody
//! answers, `askFallback` decides: `deny` refuses, `allowlist` runs covered commands only,
//! `full` runs anything. File changes (Codex's) are never covered.
//!
//! "Covered" judges the *effective* command ([`crate::command`], on a real bash parse): every
//! program the line would start must be covered, after unwrapping shells and wrappers and
//! splitting chains, and a line with anything the analyzer does not understand exactly is
//! never covered. A program is covered when
//!
//! - it is one of the harmless shell builtins `cd`, `pwd`, `true`, `false`, `:`, `echo` (when
//!   a wrapper such as `xargs`, `env` or `find -exec` starts one, it is the file `PATH` finds,
//!   which must be in a system directory);
//! - it is a safe bin ([`crate::safe_bins`]): named bare, resolving into a system directory,
//!   with arguments its profile accepts from their shape alone; or
//! - its resolved executable path matches an allowlist entry ([`crate::exec_allowlist`]);
//!   its arguments are then free. A file that is a wrapper or `find` is covered only under
//!   its own name (`./f` linked to `find` would hide `-exec` from the analyzer).
//!
//! Never covered, whatever the configuration: shells, interpreters that evaluate inline
//! code, programs that run other command lines (`sudo`, `eval`, `watch`, `flock` ...) and
//! shell builtins that set variables or options or change directory (`read`, `set`, `pushd`,
//! `printf -v`), judged by the name as written and by the resolved file's name; and a
//! program started with an environment variable other than a few harmless locale and display
//! ones (`PATH=. ls`, `LD_PRELOAD=...`, `BASH_ENV=...` or `GIT_SSH_COMMAND=... git` change
//! what runs), set on the line or changed by a wrapper's option (`env -u PATH`, `env -i`).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use openclaw_config::Config;
use openclaw_config::raw::{ExecAsk, ExecConfig, ExecSecurity};

use crate::command::{
    Invocation, base_name, effective_commands, is_shell, is_wrapper, system_program,
};
use crate::exec_allowlist::{Allowlist, in_system_dir, process_search_path, resolve};
use crate::exec_tables::{SAFE_BUILTINS, builtin_refusal, never_covered, safe_env};
use crate::safe_bins::{Profile, SafeBins, judge_args};

/// The exec approval settings of one agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecPolicy {
    /// `tools.exec.security` (default `allowlist`).
    pub security: ExecSecurity,
    /// `tools.exec.ask` (default `on-miss`).
    pub ask: ExecAsk,
    /// `tools.exec.askFallback`: what "ask" means when nobody can be asked (default `deny`).
    pub ask_fallback: ExecSecurity,
    /// `tools.exec.safeBins` with their profiles.
    pub safe_bins: SafeBins,
    /// Allowlist entries: globs over resolved executable paths.
    pub allowlist: Allowlist,
    /// The `PATH` commands run with, to resolve bare names; `None` is this process's `PATH`
    /// without relative entries (what the exec tool passes on).
    pub search_path: Option<OsString>,
    /// The directory relative program paths (`./tool`) resolve against; without one they are
    /// never covered.
    pub cwd: Option<PathBuf>,
}

/// What nothing configured means: `allowlist`, `on-miss`, `deny`.
const DEFAULT_MODES: (ExecSecurity, ExecAsk, ExecSecurity) =
    (ExecSecurity::Allowlist, ExecAsk::OnMiss, ExecSecurity::Deny);

/// `security`, `ask` and `askFallback` through the layers, defaults where none sets them.
fn modes(layers: &[&ExecConfig]) -> (ExecSecurity, ExecAsk, ExecSecurity) {
    let (security, ask, ask_fallback) = DEFAULT_MODES;
    (
        layers.iter().find_map(|e| e.security).unwrap_or(security),
        layers.iter().find_map(|e| e.ask).unwrap_or(ask),
        layers
            .iter()
            .find_map(|e| e.ask_fallback)
            .unwrap_or(ask_fallback),
    )
}

impl Default for ExecPolicy {
    /// Nothing configured: `allowlist`, `on-miss`, `deny`, the default safe bins, no entries.
    fn default() -> Self {
        let (security, ask, ask_fallback) = DEFAULT_MODES;
        Self {
            security,
            ask,
            ask_fallback,
            safe_bins: SafeBins::defaults(),
            allowlist: Allowlist::default(),
            search_path: None,
            cwd: None,
        }
    }
}

/// Whether a policy in these modes ever asks a person.
fn can_ask(security: ExecSecurity, ask: ExecAsk) -> bool {
    match (security, ask) {
        (ExecSecurity::Deny, _) | (_, ExecAsk::Off) => false,
        (_, ExecAsk::Always) => true,
        (ExecSecurity::Allowlist, ExecAsk::OnMiss) => true,
        (ExecSecurity::Full, ExecAsk::OnMiss) => false,
    }
}

/// Whether something may run, and why, in one sentence for the model and the logs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judgement {
    /// It may run.
    pub allowed: bool,
    /// Why.
    pub reason: String,
}

impl ExecPolicy {
    /// The policy of `agent_id`: `agents.list[].tools.exec` over `tools.exec` over the legacy
    /// `tools.bash`, key by key (`safeBinProfiles` bin by bin), with the config's
    /// `allowlist` entries. Entries of the approvals file are added with
    /// [`Self::with_allowlist`].
    pub fn from_config(config: &Config, agent_id: &str) -> Self {
        let layers = config.exec_layers(agent_id);
        let mut profiles: BTreeMap<String, Profile> = BTreeMap::new();
        for layer in layers.iter().rev() {
            for (name, profile) in layer.safe_bin_profiles.iter().flatten() {
                profiles.insert(name.trim().to_owned(), Profile::from_config(profile));
            }
        }
        let safe_bins = match layers.iter().find_map(|e| e.safe_bins.as_ref()) {
            Some(names) => SafeBins::new(names, &profiles),
            None => SafeBins::new(crate::safe_bins::DEFAULT_SAFE_BINS, &profiles),
        };
        let entries = layers
            .iter()
            .find_map(|e| e.allowlist.clone())
            .unwrap_or_default();
        let (security, ask, ask_fallback) = modes(&layers);
        Self {
            security,
            ask,
            ask_fallback,
            safe_bins,
            allowlist: Allowlist::new(entries),
            search_path: None,
            cwd: None,
        }
    }

    /// Whether agent `agent_id`'s policy ever asks a person ([`Self::can_ask`]), read from
    /// the config without building the whole policy.
    pub fn config_can_ask(config: &Config, agent_id: &str) -> bool {
        let (security, ask, _) = modes(&config.exec_layers(agent_id));
        can_ask(security, ask)
    }

    /// Runs everything without asking (`security: full`, `ask: off`).
    pub fn full() -> Self {
        Self {
            security: ExecSecurity::Full,
            ask: ExecAsk::Off,
            ..Self::default()
        }
    }

    /// Allowlist mode without asking: the default safe bins and these allowlist entries.
    pub fn allowlist<I, S>(entries: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            security: ExecSecurity::Allowlist,
            ask: ExecAsk::Off,
            allowlist: Allowlist::new(entries),
            ..Self::default()
        }
    }

    /// The same policy with allowlist entries added (from the approvals file).
    pub fn with_allowlist<I, S>(mut self, entries: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allowlist = self.allowlist.extended(entries);
        self
    }

    /// The same policy resolving bare names through `search_path` (a `PATH` value).
    pub fn with_search_path(mut self, search_path: impl Into<OsString>) -> Self {
        self.search_path = Some(search_path.into());
        self
    }

    /// The same policy resolving relative program paths against `cwd`.
    pub fn with_cwd(mut self, cwd: impl Into<PathBuf>) -> Self {
        self.cwd = Some(cwd.into());
        self
    }

    /// Whether this policy ever asks a person: `ask: always`, or `ask: on-miss` in allowlist
    /// mode. `deny` refuses without asking and `full` runs without asking.
    pub fn can_ask(&self) -> bool {
        can_ask(self.security, self.ask)
    }

    /// What the operator should see in the logs: ignored safe bins and allowlist entries.
    pub fn warnings(&self) -> Vec<String> {
        let mut out = self.safe_bins.warnings();
        out.extend(self.allowlist.warnings().iter().cloned());
        out
    }

    /// Whether `command` may run, collapsing "ask" into `askFallback` (nobody asked).
    pub fn judge_command(&self, command: &str) -> Judgement {
        self.verdict(command).unattended()
    }

    /// Whether `command` runs, is refused, or needs a person's approval (relative program
    /// paths resolve against [`Self::cwd`]).
    pub fn verdict(&self, command: &str) -> Verdict {
        self.verdict_at(command, self.cwd.as_deref())
    }

    /// [`Self::verdict`] for a command run in `cwd`.
    pub fn verdict_in(&self, command: &str, cwd: &Path) -> Verdict {
        self.verdict_at(command, Some(cwd))
    }

    fn verdict_at(&self, command: &str, cwd: Option<&Path>) -> Verdict {
        match self.uncovered_at(command, cwd) {
            None => self.decide(true, "the command"),
            Some(miss) => {
                let mut verdict = self.decide(false, "the command");
                // Say what missed the allowlist only where the allowlist was consulted.
                if self.security == ExecSecurity::Allowlist
                    || self.ask_fallback == ExecSecurity::Allowlist
                {
                    verdict.add_detail(&miss);
                }
                verdict
            }
        }
    }

    /// Whether a Codex file change is made, refused, or needs a person's approval (file
    /// changes are never allowlisted).
    pub fn file_change_verdict(&self) -> Verdict {
        self.decide(false, "the file change")
    }

    /// The decision table for something that is (`covered`) or is not allowlisted, with
    /// "ask" resolved through `askFallback`; `what` names it in the reason.
    pub fn judge(&self, covered: bool, what: &str) -> Judgement {
        self.decide(covered, what).unattended()
    }

    /// The allowlist patterns "allow-always" would add for `command`: the resolved absolute
    /// path of every program it runs that is not covered yet. Empty when any program can
    /// never be allowlisted (a shell, an interpreter, an unsafe variable, a line that cannot
    /// be judged, a program that cannot be resolved).
    pub fn always_patterns(&self, command: &str) -> Vec<String> {
        self.always_patterns_at(command, self.cwd.as_deref())
    }

    /// [`Self::always_patterns`] for a command run in `cwd`.
    pub fn always_patterns_in(&self, command: &str, cwd: &Path) -> Vec<String> {
        self.always_patterns_at(command, Some(cwd))
    }

    fn always_patterns_at(&self, command: &str, cwd: Option<&Path>) -> Vec<String> {
        let Ok(invocations) = effective_commands(command) else {
            return Vec::new();
        };
        let mut out: Vec<String> = Vec::new();
        for (invocation, cwd) in with_cwd(&invocations, cwd) {
            if self.cover(invocation, cwd).is_ok() {
                continue;
            }
            if invocation.env.iter().any(|n| !safe_env(n)) || never_covered(&invocation.program) {
                return Vec::new();
            }
            let Some(resolved) = resolve(&invocation.program, &self.path(), cwd) else {
                return Vec::new();
            };
            if resolved
                .file_name()
                .and_then(|n| n.to_str())
                .is_none_or(never_covered)
                || runner_in_disguise(&invocation.program, &resolved).is_some()
                || builtin_refusal(&invocation.program, &invocation.args).is_some()
            {
                return Vec::new();
            }
            let Some(pattern) = resolved.to_str().map(glob_literal) else {
                return Vec::new();
            };
            if !out.contains(&pattern) {
                out.push(pattern);
            }
        }
        out
    }

    /// The decision table (see the module docs).
    fn decide(&self, covered: bool, what: &str) -> Verdict {
        match (self.security, self.ask) {
            (ExecSecurity::Deny, _) => Verdict::Deny {
                reason: "tools.exec.security is deny".to_owned(),
            },
            (_, ExecAsk::Always) => self.ask(covered, "tools.exec.ask is always".to_owned()),
            (ExecSecurity::Full, _) => Verdict::Allow {
                reason: "tools.exec.security is full".to_owned(),
            },
            (ExecSecurity::Allowlist, _) if covered => Verdict::Allow {
                reason: format!("{what} is covered by the allowlist and safe bins"),
            },
            (ExecSecurity::Allowlist, ExecAsk::Off) => Verdict::Deny {
                reason: format!("{what} is not covered by the allowlist or tools.exec.safeBins"),
            },
            (ExecSecurity::Allowlist, ExecAsk::OnMiss) => self.ask(
                false,
                format!("{what} is not covered by the allowlist or tools.exec.safeBins"),
            ),
        }
    }

    /// `None` when every program `command` runs is covered, else what is not, as a phrase.
    pub fn uncovered(&self, command: &str) -> Option<String> {
        self.uncovered_at(command, self.cwd.as_deref())
    }

    fn uncovered_at(&self, command: &str, cwd: Option<&Path>) -> Option<String> {
        let invocations = match effective_commands(command) {
            Ok(all) if all.is_empty() => return Some("it runs no program".to_owned()),
            Ok(all) => all,
            Err(opaque) => return Some(format!("it {}", opaque.describe())),
        };
        let mut misses: Vec<String> = Vec::new();
        for (invocation, cwd) in with_cwd(&invocations, cwd) {
            if let Err(miss) = self.cover(invocation, cwd)
                && !misses.contains(&miss)
            {
                misses.push(miss);
            }
        }
        (!misses.is_empty()).then(|| misses.join("; "))
    }

    fn path(&self) -> OsString {
        self.search_path.clone().unwrap_or_else(process_search_path)
    }

    /// Whether `invocation` is covered (a builtin, a safe bin, an allowlist entry), or why
    /// it is not.
    fn cover(&self, invocation: &Invocation, cwd: Option<&Path>) -> Result<(), String> {
        let program = invocation.program.as_str();
        if let Some(name) = invocation.env.iter().find(|n| !safe_env(n)) {
            return Err(format!(
                "it sets {name} for {program}, which can change what runs"
            ));
        }
        if let Some(why) = builtin_refusal(program, &invocation.args) {
            return Err(why);
        }
        if never_covered(program) {
            return Err(format!(
                "{program} runs other code or changes what the shell runs next (a shell, an \
                 interpreter, a command runner, or a builtin that sets variables, options or \
                 the directory) and is never allowlisted"
            ));
        }
        let path = self.path();
        // Every wrapper on the way runs too, and is looked up on PATH unless the shell runs
        // it itself: checked before anything is covered, builtins included (`env echo`
        // runs whichever `env` PATH finds first).
        for wrapper in &invocation.through {
            // `find` is judged as its own invocation.
            let name = base_name(wrapper);
            if name == "busybox" {
                return Err(format!(
                    "{wrapper} runs its own {program} applet, not the file an entry or safe bin \
                     would judge"
                ));
            }
            if wrapper.contains('/') || !(is_wrapper(name) || is_shell(name)) {
                continue;
            }
            // `exec`, `command` and `time` are the shell's own when the line runs them, but a
            // file when a wrapper does (`env time ls`), and dash has no `time` keyword.
            let builtin = matches!(wrapper.as_str(), "exec" | "command" | "time");
            match resolve(wrapper, &path, cwd) {
                Some(file) if in_system_dir(&file) => {}
                Some(file) => {
                    return Err(format!(
                        "{wrapper} resolves to {}, outside the system directories, so what it \
                         runs is not known",
                        file.display()
                    ));
                }
                None if builtin => {}
                None => return Err(format!("{wrapper} is not found on PATH")),
            }
        }
        if SAFE_BUILTINS.contains(&program) {
            return self.cover_builtin(invocation, &path, cwd);
        }
        if let Some(why) = find_writes_files(program, &invocation.args) {
            return Err(why);
        }
        let resolved = resolve(program, &path, cwd);
        if let Some(file) = &resolved
            && let Some(name) = file.file_name().and_then(|n| n.to_str())
        {
            if never_covered(name) {
                return Err(format!(
                    "{program} is {}, which runs other code and is never allowlisted",
                    file.display()
                ));
            }
            if let Some(why) = runner_in_disguise(program, file) {
                return Err(why);
            }
        }
        let safe_bin = if program.contains('/') {
            None
        } else {
            self.safe_bins.profile(program)
        };
        let mut safe_bin_miss = None;
        if let Some(profile) = safe_bin {
            let checked = match &resolved {
                None => Err(format!("{program} is not found on PATH")),
                Some(file) if !in_system_dir(file) => Err(format!(
                    "{program} resolves to {}, outside the system directories a safe bin must \
                     come from",
                    file.display()
                )),
                Some(_) if invocation.args_vary => Err(format!(
                    "{program} is given arguments the line does not fix (a glob, braces, or \
                     words xargs or find add)"
                )),
                Some(_) => judge_args(program, profile, &invocation.args),
            };
            match checked {
                Ok(()) => return Ok(()),
                Err(why) => safe_bin_miss = Some(why),
            }
        }
        if let Some(file) = resolved {
            if self.allowlist.covers(&file) {
                return Ok(());
            }
            return Err(safe_bin_miss.unwrap_or_else(|| {
                let ignored = self
                    .safe_bins
                    .ignored(program)
                    .map(|why| format!(" (tools.exec.safeBins lists it, but {why})"))
                    .unwrap_or_default();
                format!(
                    "{program} ({}) has no allowlist entry and is not a safe bin{ignored}",
                    file.display()
                )
            }));
        }
        Err(safe_bin_miss.unwrap_or_else(|| {
            format!("{program} cannot be resolved to an executable file, so no entry covers it")
        }))
    }

    /// A harmless builtin (`echo`, `true`, `cd` ...). The shell runs its own code for it,
    /// but a wrapper that starts programs (`xargs`, `env`, `nice`, `exec`, `find -exec` ...)
    /// runs the file of that name PATH finds first, which is covered only where a safe bin
    /// would be (in a system directory) or by an entry for that file. `xargs` alone runs
    /// `echo` so.
    fn cover_builtin(
        &self,
        invocation: &Invocation,
        path: &OsString,
        cwd: Option<&Path>,
    ) -> Result<(), String> {
        let program = invocation.program.as_str();
        let Some(wrapper) = invocation.through.iter().find(|w| {
            let name = base_name(w);
            !is_shell(name) && name != "command"
        }) else {
            return Ok(());
        };
        match resolve(program, path, cwd) {
            Some(file) if in_system_dir(&file) => Ok(()),
            // An entry for that very file (what "allow-always" proposes for it).
            Some(file)
                if self.allowlist.covers(&file)
                    && file
                        .file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| !never_covered(n))
                    && runner_in_disguise(program, &file).is_none() =>
            {
                Ok(())
            }
            Some(file) => Err(format!(
                "{program} is run by {wrapper} as the file {}, outside the system directories, \
                 not as the shell's builtin",
                file.display()
            )),
            None => Err(format!(
                "{program} is run by {wrapper} as a file, and none is found on PATH"
            )),
        }
    }

    /// "Ask", with what `askFallback` decides when nobody answers.
    fn ask(&self, covered: bool, reason: String) -> Verdict {
        let fallback = self.ask_fallback;
        let allowed = match fallback {
            ExecSecurity::Full => true,
            ExecSecurity::Allowlist => covered,
            ExecSecurity::Deny => false,
        };
        Verdict::Ask {
            fallback: Judgement {
                allowed,
                reason: format!("tools.exec.askFallback ({fallback}) decides"),
            },
            reason,
        }
    }
}

/// `find`'s actions that write a file the line names (`-fprint`, `-fprint0`, `-fprintf`,
/// `-fls`), if `args` hold one. What `find` runs is judged (`-exec`), so an entry for `find`
/// does not let it start anything else; the same entry must not let it write a file of its
/// choosing either (a `~/.profile`, a repository's `.git/hooks/pre-commit`), which some
/// other program runs later.
fn find_writes_files(program: &str, args: &[String]) -> Option<String> {
    const WRITES: [&str; 4] = ["-fprint", "-fprint0", "-fprintf", "-fls"];
    if base_name(program) != "find" {
        return None;
    }
    let action = args.iter().find(|a| WRITES.contains(&a.as_str()))?;
    Some(format!(
        "{program} {action} writes to a file the line names, which no entry covers"
    ))
}

/// Why a program that is a wrapper or `find` under another name must not be covered, if so.
/// Wrappers are unwrapped and `find -exec` is judged by the name as written; a link to
/// `/usr/bin/xargs` or `/usr/bin/find` under another name (`./f . -exec rm -rf x ;`), or a
/// wrapper named by a path outside the system directories, would run its program unjudged
/// if an entry for the file covered it.
fn runner_in_disguise(program: &str, resolved: &Path) -> Option<String> {
    let name = resolved.file_name().and_then(|n| n.to_str())?;
    let written = base_name(program);
    let disguised = if is_wrapper(name) {
        written != name || !system_program(program)
    } else {
        name == "find" && written != "find"
    };
    disguised.then(|| {
        format!(
            "{program} is {}, which starts other programs and is judged only when named as \
             itself",
            resolved.display()
        )
    })
}

/// Each invocation with the directory its relative program path resolves against: `cwd` until
/// the line runs `cd`, none after it (the shell may be elsewhere by then, so `cd /tmp &&
/// ./tool` is not the `./tool` of the working directory).
fn with_cwd<'a>(
    invocations: &'a [Invocation],
    cwd: Option<&'a Path>,
) -> impl Iterator<Item = (&'a Invocation, Option<&'a Path>)> {
    let mut moved = false;
    invocations.iter().map(move |invocation| {
        let here = if moved { None } else { cwd };
        moved |= invocation.program == "cd";
        (invocation, here)
    })
}

/// A path as a glob matching exactly that path (glob characters escaped).
fn glob_literal(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for c in path.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '{' | '}' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// What exec approvals say about one command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// It runs without asking.
    Allow {
        /// Why, in one phrase.
        reason: String,
    },
    /// It is refused without asking.
    Deny {
        /// Why, in one phrase.
        reason: String,
    },
    /// A person must approve it.
    Ask {
        /// Why it needs approval, in one phrase.
        reason: String,
        /// What `askFallback` decides when nobody can be asked or nobody answers in time.
        fallback: Judgement,
    },
}

impl Verdict {
    /// The verdict when nobody can be asked: "ask" becomes `askFallback`'s decision.
    pub fn unattended(self) -> Judgement {
        match self {
            Verdict::Allow { reason } => allow(reason),
            Verdict::Deny { reason } => refuse(reason),
            Verdict::Ask { reason, fallback } => Judgement {
                allowed: fallback.allowed,
                reason: format!("{reason}; nobody can approve it, so {}", fallback.reason),
            },
        }
    }

    /// Appends a detail in parentheses to the reason of a refusal or a question.
    fn add_detail(&mut self, detail: &str) {
        match self {
            Verdict::Allow { .. } => {}
            Verdict::Deny { reason } | Verdict::Ask { reason, .. } => {
                reason.push_str(&format!(" ({detail})"));
            }
        }
    }
}

fn allow(reason: String) -> Judgement {
    Judgement {
        allowed: true,
        reason,
    }
}

fn refuse(reason: String) -> Judgement {
    Judgement {
        allowed: false,
        reason,
    }
}
