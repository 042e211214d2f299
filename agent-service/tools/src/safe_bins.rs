//! Safe bins: stdin-only stream filters that allowlist mode runs without an allowlist entry
//! (`tools.exec.safeBins`, default `cut uniq head tail tr wc`), each judged against a profile
//! of the argv shapes it accepts.
//!
//! The judgement reads the words alone, never the filesystem: an option must be one the
//! profile lists, written in full (`--lines`, not `--li`: GNU tools accept unambiguous
//! abbreviations, so an abbreviation is refused rather than guessed); an operand must not look
//! like a path (contain `/`, or start with `.` or `~`) and the number of operands must fit the
//! profile (0 for the defaults, which read standard input only). Arguments the line does not
//! fix (a glob, braces, words `xargs` or `find -exec` add) are refused.
//!
//! Programs that can run code, write files or read files by design are never safe bins,
//! whatever the config says ([`NEVER_SAFE`]); a configured safe bin without a built-in or
//! configured profile is ignored too. Both are reported as warnings for the operator and named
//! in the refusal the model sees. Some options are refused for a bin whatever its profile
//! lists ([`ALWAYS_DENIED`]): `sort -o` writes a file, `grep -f` reads one.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, LazyLock};

use openclaw_config::raw::SafeBinProfile;

/// The safe bins when `tools.exec.safeBins` is unset.
pub const DEFAULT_SAFE_BINS: [&str; 6] = ["cut", "uniq", "head", "tail", "tr", "wc"];

/// Programs that are never safe bins, on top of the shells, interpreters and command runners
/// that are never covered at all (`exec_tables`): they write or delete files, read
/// files named in options, run programs through their options, or reach the network.
/// Version suffixes are ignored.
pub const NEVER_SAFE: [&str; 51] = [
    "sed", "tee", "dd", "tar", "cpio", "zip", "unzip", "git", "rg", "find", "fd", "xargs", "env",
    "cp", "mv", "rm", "ln", "install", "touch", "mkdir", "rmdir", "chmod", "chown", "truncate",
    "split", "csplit", "shred", "curl", "wget", "ssh", "scp", "rsync", "nc", "socat", "make", "vi",
    "vim", "nvim", "emacs", "nano", "ed", "ex", "less", "more", "man", "patch", "sqlite3",
    "openssl", "gpg", "bc", "dc",
];

/// Options refused for a bin whatever its profile says (`sort -o` writes a file,
/// `--compress-program` runs one; `grep -f` and `-r` read files; `jq --rawfile` reads one).
const ALWAYS_DENIED: [(&str, &[&str]); 4] = [
    (
        "sort",
        &[
            "-o",
            "--output",
            "--compress-program",
            "-T",
            "--temporary-directory",
            "--files0-from",
            "--random-source",
        ],
    ),
    (
        "grep",
        &[
            "-f",
            "--file",
            "-r",
            "-R",
            "--recursive",
            "--dereference-recursive",
            "-d",
            "--directories",
            "-D",
            "--devices",
            "--exclude-from",
        ],
    ),
    (
        "jq",
        &[
            "-f",
            "--from-file",
            "--rawfile",
            "--slurpfile",
            "-L",
            "--library-path",
        ],
    ),
    ("wc", &["--files0-from"]),
];

/// Bins whose operands are never files, whatever the profile says: `grep` takes its pattern
/// through `-e`/`--regexp` only.
const NO_OPERANDS: [&str; 1] = ["grep"];

/// The argv shapes one safe bin accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    /// Fewest operands.
    pub min_positional: usize,
    /// Most operands.
    pub max_positional: usize,
    /// Options without a value, as written (`-c`, `--count`).
    pub flags: BTreeSet<String>,
    /// Options with a value, attached or the next word (`-n`, `--lines`).
    pub value_flags: BTreeSet<String>,
    /// Options refused even when listed above.
    pub denied: BTreeSet<String>,
    /// `-5` means `-n 5` (`head`, `tail`).
    pub numeric_count: bool,
    /// Values of options are checked like operands (custom profiles: the operator's value
    /// options are not known to be harmless; the built-in ones are counts, lists and
    /// delimiters).
    pub check_values: bool,
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

/// The built-in profile of a default safe bin (GNU coreutils options that touch no file).
pub fn builtin_profile(name: &str) -> Option<Profile> {
    let (max, flags, values, denied, numeric): (usize, &[&str], &[&str], &[&str], bool) = match name
    {
        "cut" => (
            0,
            &[
                "-s",
                "-z",
                "-n",
                "--only-delimited",
                "--zero-terminated",
                "--complement",
            ],
            &[
                "-b",
                "-c",
                "-f",
                "-d",
                "--bytes",
                "--characters",
                "--fields",
                "--delimiter",
                "--output-delimiter",
            ],
            &[],
            false,
        ),
        "uniq" => (
            0,
            &[
                "-c",
                "-d",
                "-D",
                "-i",
                "-u",
                "-z",
                "--count",
                "--repeated",
                "--ignore-case",
                "--unique",
                "--zero-terminated",
            ],
            &[
                "-f",
                "-s",
                "-w",
                "--skip-fields",
                "--skip-chars",
                "--check-chars",
            ],
            &[],
            false,
        ),
        "head" => (
            0,
            &[
                "-q",
                "-v",
                "-z",
                "--quiet",
                "--silent",
                "--verbose",
                "--zero-terminated",
            ],
            &["-n", "-c", "--lines", "--bytes"],
            &[],
            true,
        ),
        "tail" => (
            0,
            &[
                "-q",
                "-v",
                "-z",
                "--quiet",
                "--silent",
                "--verbose",
                "--zero-terminated",
            ],
            &["-n", "-c", "--lines", "--bytes"],
            &[
                "-f",
                "-F",
                "--follow",
                "--retry",
                "--pid",
                "-s",
                "--sleep-interval",
            ],
            true,
        ),
        "tr" => (
            2,
            &[
                "-c",
                "-C",
                "-d",
                "-s",
                "-t",
                "--complement",
                "--delete",
                "--squeeze-repeats",
                "--truncate-set1",
            ],
            &[],
            &[],
            false,
        ),
        "wc" => (
            0,
            &[
                "-c",
                "-m",
                "-l",
                "-L",
                "-w",
                "--bytes",
                "--chars",
                "--lines",
                "--max-line-length",
                "--words",
            ],
            &[],
            &["--files0-from"],
            false,
        ),
        _ => return None,
    };
    Some(Profile {
        min_positional: usize::from(name == "tr"),
        max_positional: max,
        flags: set(flags),
        value_flags: set(values),
        denied: set(denied),
        numeric_count: numeric,
        check_values: false,
    })
}

impl Profile {
    /// A profile from `tools.exec.safeBinProfiles.<bin>`.
    pub fn from_config(raw: &SafeBinProfile) -> Self {
        let list = |l: &Option<Vec<String>>| -> BTreeSet<String> {
            l.iter().flatten().map(|s| s.trim().to_owned()).collect()
        };
        let to_usize = |n: Option<u32>| n.map_or(0, |n| usize::try_from(n).unwrap_or(usize::MAX));
        Self {
            min_positional: to_usize(raw.min_positional),
            max_positional: to_usize(raw.max_positional),
            flags: list(&raw.allowed_flags),
            value_flags: list(&raw.allowed_value_flags),
            denied: list(&raw.denied_flags),
            numeric_count: false,
            check_values: true,
        }
    }
}

/// Whether a name can never be a safe bin (ignoring a version suffix: `python3.12`).
pub fn never_safe(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    let unversioned = lower.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.' || c == '-');
    NEVER_SAFE.contains(&lower.as_str())
        || (!unversioned.is_empty() && NEVER_SAFE.contains(&unversioned))
}

/// Looks like a path to the shape test: contains `/`, or starts with `.` or `~`.
pub fn path_like(word: &str) -> bool {
    word.contains('/') || word.starts_with('.') || word.starts_with('~')
}

/// The safe bins of one agent: name → profile, plus the configured names that were ignored
/// and why. Never changed once built, so a copy (one per run's exec policy) shares the maps.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SafeBins {
    bins: Arc<BTreeMap<String, Profile>>,
    ignored: Arc<BTreeMap<String, String>>,
}

impl SafeBins {
    /// The default set with the built-in profiles (built once per process).
    pub fn defaults() -> Self {
        static DEFAULTS: LazyLock<SafeBins> =
            LazyLock::new(|| SafeBins::new(DEFAULT_SAFE_BINS, &BTreeMap::new()));
        DEFAULTS.clone()
    }

    /// `names` with their profiles: a configured profile wins over a built-in one; a name
    /// without either, a name that is never safe, or a path is ignored (see [`Self::ignored`]).
    pub fn new<I, S>(names: I, profiles: &BTreeMap<String, Profile>) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut bins = BTreeMap::new();
        let mut ignored = BTreeMap::new();
        for name in names {
            let name = name.as_ref().trim();
            if name.is_empty() {
                continue;
            }
            if name.contains('/') {
                ignored.insert(
                    name.to_owned(),
                    "safe bins are names, not paths (a path needs an allowlist entry)".to_owned(),
                );
            } else if never_safe(name) || crate::exec_tables::never_covered(name) {
                ignored.insert(
                    name.to_owned(),
                    "it can run programs, write files or read files, so it is never a safe bin"
                        .to_owned(),
                );
            } else if let Some(profile) = profiles
                .get(name)
                .cloned()
                .or_else(|| builtin_profile(name))
            {
                bins.insert(name.to_owned(), profile);
            } else {
                ignored.insert(
                    name.to_owned(),
                    format!("it has no profile (add tools.exec.safeBinProfiles.{name})"),
                );
            }
        }
        Self {
            bins: Arc::new(bins),
            ignored: Arc::new(ignored),
        }
    }

    /// The profile of a safe bin.
    pub fn profile(&self, name: &str) -> Option<&Profile> {
        self.bins.get(name)
    }

    /// Why a configured name is not a safe bin, if it was configured and ignored.
    pub fn ignored(&self, name: &str) -> Option<&str> {
        self.ignored.get(name).map(String::as_str)
    }

    /// One warning per ignored name, for the operator's logs.
    pub fn warnings(&self) -> Vec<String> {
        self.ignored
            .iter()
            .map(|(name, why)| format!("tools.exec.safeBins entry {name:?} is ignored: {why}"))
            .collect()
    }

    /// The names in use, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.bins.keys().map(String::as_str)
    }
}

/// Judges the arguments of safe bin `name` against `profile` from their shape alone; the
/// error names the first word refused and why.
pub fn judge_args(name: &str, profile: &Profile, args: &[String]) -> Result<(), String> {
    let forced: &[&str] = ALWAYS_DENIED
        .iter()
        .find(|(bin, _)| *bin == name)
        .map_or(&[], |(_, flags)| flags);
    let denied = |flag: &str| profile.denied.contains(flag) || forced.contains(&flag);
    let mut operands = 0usize;
    let mut words = args.iter();
    let mut options_done = false;
    while let Some(word) = words.next() {
        if options_done || word == "-" || !word.starts_with('-') {
            if path_like(word) {
                return Err(format!("{name} is given {word:?}, which looks like a path"));
            }
            operands += 1;
            continue;
        }
        if word == "--" {
            options_done = true;
            continue;
        }
        if let Some(long) = word.strip_prefix("--") {
            let (flag_name, attached) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (long, None),
            };
            let flag = format!("--{flag_name}");
            // An abbreviation of a refused option is that option to the program.
            let abbreviates_denied = profile
                .denied
                .iter()
                .map(String::as_str)
                .chain(forced.iter().copied())
                .any(|d| d.starts_with("--") && d.starts_with(flag.as_str()));
            if denied(&flag) || abbreviates_denied {
                return Err(format!("{name} {flag} is refused for a safe bin"));
            }
            if profile.value_flags.contains(&flag) {
                let value = match attached {
                    Some(v) => v.to_owned(),
                    None => words
                        .next()
                        .cloned()
                        .ok_or_else(|| format!("{name} {flag} lacks its value"))?,
                };
                check_value(name, profile, &flag, &value)?;
            } else if profile.flags.contains(&flag) && attached.is_none() {
                // A flag without a value.
            } else {
                return Err(format!(
                    "{name} {word} is not an option its safe-bin profile allows (options are \
                     written in full)"
                ));
            }
            continue;
        }
        let cluster = &word[1..];
        if profile.numeric_count && cluster.chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        for (at, c) in cluster.char_indices() {
            let flag = format!("-{c}");
            if denied(&flag) {
                return Err(format!("{name} {flag} is refused for a safe bin"));
            }
            if profile.value_flags.contains(&flag) {
                let rest = &cluster[at + c.len_utf8()..];
                let value = if rest.is_empty() {
                    words
                        .next()
                        .cloned()
                        .ok_or_else(|| format!("{name} {flag} lacks its value"))?
                } else {
                    rest.to_owned()
                };
                check_value(name, profile, &flag, &value)?;
                break;
            }
            if !profile.flags.contains(&flag) {
                return Err(format!(
                    "{name} {flag} is not an option its safe-bin profile allows"
                ));
            }
        }
    }
    let max = if NO_OPERANDS.contains(&name) {
        0
    } else {
        profile.max_positional
    };
    if operands > max {
        return Err(if max == 0 {
            format!("{name} is given an operand, and as a safe bin it reads standard input only")
        } else {
            format!("{name} is given {operands} operands, more than its profile's {max}")
        });
    }
    if operands < profile.min_positional {
        return Err(format!(
            "{name} is given {operands} operands, fewer than its profile's {}",
            profile.min_positional
        ));
    }
    Ok(())
}

fn check_value(name: &str, profile: &Profile, flag: &str, value: &str) -> Result<(), String> {
    if profile.check_values && path_like(value) {
        return Err(format!(
            "{name} {flag} is given {value:?}, which looks like a path"
        ));
    }
    Ok(())
}
