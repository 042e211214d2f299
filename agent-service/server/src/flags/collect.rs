//! Every value clap refuses, in one pass. Clap stops at the first value it cannot parse (a
//! number that is not one, an unknown enum value, an unknown flag), so on such an error the
//! parse is tried again without that flag (its value on the command line, or its variable),
//! until it parses; each refusal becomes one line naming the flag, its variable when the
//! value came from there, and the value. [`super::Parsed::resolve`] then reports them with
//! the problems of the values that did parse, so an operator fixes a command line in one go.

use std::ffi::OsString;

use clap::{
    Command,
    error::{ContextKind, ContextValue, ErrorKind},
};

/// The subcommands, which an unknown flag never takes as its value.
const SUBCOMMANDS: [&str; 2] = ["serve", "healthcheck"];

/// The parse of `args` (the program name first) by the command `make` returns, with the values
/// it refused on the way (one line each), or the first error that is not about one flag's
/// value (help, version, an unknown subcommand), with the lines collected before it. Each
/// round parses with a fresh command (a command clap has parsed with may not be changed).
pub(super) fn matches(
    make: impl Fn() -> Command,
    mut args: Vec<OsString>,
) -> Result<(clap::ArgMatches, Vec<String>), (clap::Error, Vec<String>)> {
    let mut refused = Vec::new();
    // Flags whose variable held a refused value: parsed without it from then on.
    let mut unset: Vec<clap::Id> = Vec::new();
    // Each round drops a flag or a variable, so the rounds are bounded by their number.
    let rounds = args.len() + make().get_arguments().count() + 1;
    for _ in 0..rounds {
        let mut command = unset.iter().fold(make(), |command, id| {
            command.mut_arg(id.clone(), |arg| arg.env(None))
        });
        let error = match command.try_get_matches_from_mut(args.iter()) {
            Ok(matches) => return Ok((matches, refused)),
            Err(error) => error,
        };
        let dropped = match error.kind() {
            ErrorKind::InvalidValue | ErrorKind::ValueValidation => {
                drop_value(&command, &mut args, &mut unset, &error)
            }
            ErrorKind::UnknownArgument => drop_unknown(&mut args, &error),
            _ => None,
        };
        match dropped {
            Some(line) => refused.push(line),
            None => return Err((error, refused)),
        }
    }
    let error = make().error(ErrorKind::TooManyValues, "too many bad values to list");
    Err((error, refused))
}

/// A context string of `error` (an argument as clap names it, a value).
fn context(error: &clap::Error, kind: ContextKind) -> Option<String> {
    match error.get(kind)? {
        ContextValue::String(text) => Some(text.clone()),
        ContextValue::Strings(texts) => Some(texts.join(", ")),
        _ => None,
    }
}

/// Drops the flag whose value clap refused: its occurrences on the command line, or (when
/// it has none there) its variable, for the next rounds. The line saying why, or None when there was nothing to
/// drop.
fn drop_value(
    command: &Command,
    args: &mut Vec<OsString>,
    unset: &mut Vec<clap::Id>,
    error: &clap::Error,
) -> Option<String> {
    // "--drain-secs <DRAIN_SECS>": the flag is the first word.
    let named = context(error, ContextKind::InvalidArg)?;
    let flag = named.split_whitespace().next()?.to_owned();
    let long = flag.strip_prefix("--")?;
    let arg = command
        .get_arguments()
        .find(|arg| arg.get_long() == Some(long))?;
    let (id, env) = (
        arg.get_id().clone(),
        arg.get_env().map(|var| var.to_string_lossy().into_owned()),
    );
    let value = context(error, ContextKind::InvalidValue).unwrap_or_default();
    let reason = match (
        std::error::Error::source(error),
        context(error, ContextKind::ValidValue),
    ) {
        (Some(source), _) => source.to_string(),
        (None, Some(valid)) => format!("expected one of {valid}"),
        (None, None) => error.kind().as_str().unwrap_or("invalid value").to_owned(),
    };
    let from_args = remove_flag(args, &flag, true);
    let from = if from_args {
        flag.clone()
    } else {
        let var = env?;
        if unset.contains(&id) {
            return None;
        }
        unset.push(id);
        format!("{flag} ({var})")
    };
    Some(format!("{from}: invalid value {value:?}: {reason}"))
}

/// Drops a flag clap does not know, with the value that follows it (a word that is not a
/// flag or a subcommand). The line saying so, with clap's suggestion.
fn drop_unknown(args: &mut Vec<OsString>, error: &clap::Error) -> Option<String> {
    let given = context(error, ContextKind::InvalidArg)?;
    let flag = given.split('=').next()?.to_owned();
    if !flag.starts_with('-') || !remove_flag(args, &flag, false) {
        return None;
    }
    let hint = context(error, ContextKind::SuggestedArg)
        .map(|suggested| format!(" (did you mean {suggested}?)"))
        .unwrap_or_default();
    Some(format!("{flag}: no such flag{hint}"))
}

/// Removes every `flag VALUE` and `flag=VALUE` from `args` (never the program name). A
/// following word is taken as the value when `takes_value`, or when it looks like one: not
/// a flag, not a subcommand. True when anything was removed.
fn remove_flag(args: &mut Vec<OsString>, flag: &str, takes_value: bool) -> bool {
    let with_value = format!("{flag}=");
    let mut removed = false;
    let mut i = 1;
    while i < args.len() {
        let word = args[i].to_string_lossy();
        if word == flag {
            let value_follows = args.get(i + 1).is_some_and(|next| {
                let next = next.to_string_lossy();
                takes_value || !(next.starts_with('-') || SUBCOMMANDS.contains(&next.as_ref()))
            });
            let end = if value_follows { i + 2 } else { i + 1 };
            args.drain(i..end);
            removed = true;
        } else if word.starts_with(&with_value) {
            args.remove(i);
            removed = true;
        } else {
            i += 1;
        }
    }
    removed
}
