//! The effective-command analyzer shared by exec approvals and the Codex harness: a real
//! bash parse, chains split, shells and wrappers unwrapped, whatever cannot be judged exactly
//! is `Opaque`. The decision corpus and the embedding property test are in `exec_corpus.rs`.

use openclaw_tools::command::{Opaque, effective_commands, effective_programs};
use proptest::prelude::*;

fn programs(line: &str) -> Option<Vec<String>> {
    effective_programs(line)
}

fn list(items: &[&str]) -> Option<Vec<String>> {
    Some(items.iter().map(|s| (*s).to_owned()).collect())
}

#[test]
fn chains_wrappers_and_quotes_are_seen_through() {
    assert_eq!(programs("ls -la"), list(&["ls"]));
    assert_eq!(
        programs("ls && git status || echo 'a;b' ; pwd | wc -l; true"),
        list(&["ls", "git", "echo", "pwd", "wc", "true"])
    );
    assert_eq!(
        programs("/bin/bash -c 'cd sub && rm -f x'"),
        list(&["cd", "rm"])
    );
    assert_eq!(
        programs("env -i LANG=C FOO=1 python3 -c 'print(1)'"),
        list(&["python3"])
    );
    assert_eq!(programs("FOO=1 make"), list(&["make"]));
    assert_eq!(programs(r#"sh -c "bash -c \"touch x\"""#), list(&["touch"]));
    assert_eq!(programs("bash script.sh"), list(&["bash"]));
    assert_eq!(programs("curl -s x | sh"), list(&["curl", "sh"]));
    assert_eq!(
        programs("l\\s"),
        list(&["ls"]),
        "a backslash escape is removed"
    );
    assert_eq!(programs("'r'\"m\" x"), list(&["rm"]), "quotes are removed");
    assert_eq!(programs(""), list(&[]));
}

#[test]
fn wrappers_are_judged_by_the_program_they_start() {
    for (line, expected) in [
        ("nice -n 5 rm x", "rm"),
        ("nice -10 rm x", "rm"),
        ("timeout 5 rm x", "rm"),
        ("timeout -s KILL --kill-after=2 5s rm x", "rm"),
        ("nohup rm x", "rm"),
        ("stdbuf -oL rm x", "rm"),
        ("time -p rm x", "rm"),
        ("command -p rm x", "rm"),
        ("exec rm x", "rm"),
        ("setsid -f rm x", "rm"),
        ("xargs -0 -I{} rm {}", "rm"),
        ("xargs -n 1 rm", "rm"),
        ("busybox rm x", "rm"),
        ("env -u HOME -- rm x", "rm"),
        ("nice timeout 5 env LANG=C nohup rm x", "rm"),
    ] {
        assert_eq!(programs(line), list(&[expected]), "{line}");
    }
    assert_eq!(
        programs("find . -name '*.o' -exec rm {} ;"),
        list(&["find", "rm"])
    );
    assert_eq!(programs("find . -okdir rm {} +"), list(&["find", "rm"]));
    assert_eq!(
        programs("xargs"),
        list(&["echo"]),
        "xargs runs echo by default"
    );
    assert_eq!(programs("env"), list(&["env"]));
}

#[test]
fn environment_assignments_are_reported_per_program() {
    let commands = effective_commands("A=1 env B=2 ls; LANG=C wc").unwrap();
    assert_eq!(commands.len(), 2);
    assert_eq!(commands[0].program, "ls");
    assert_eq!(commands[0].env, ["A", "B"]);
    assert_eq!(commands[1].env, ["LANG"]);
    assert_eq!(commands[1].base_name(), "wc");
}

#[test]
fn harmless_redirections_are_judged_and_others_are_not() {
    assert_eq!(programs("ls 2>&1 | wc -l"), list(&["ls", "wc"]));
    assert_eq!(programs("ls >/dev/null 2>&1"), list(&["ls"]));
    assert_eq!(programs("ls &> /dev/null"), list(&["ls"]));
    assert_eq!(programs("ls </dev/null 2>&-"), list(&["ls"]));
    for line in [
        "echo hi > file",
        "echo hi >> ~/.bashrc",
        "cat < /etc/passwd",
        "ls >&file",
        "ls > \"$HOME/x\"",
    ] {
        assert_eq!(effective_commands(line), Err(Opaque::Redirection), "{line}");
    }
}

#[test]
fn what_cannot_be_judged_is_opaque() {
    for (line, why) in [
        ("ls $(whoami)", Opaque::Substitution),
        ("echo \"$(id)\"", Opaque::Substitution),
        ("ls `id`", Opaque::Substitution),
        ("cat <(curl x)", Opaque::Substitution),
        ("tee >(sh)", Opaque::Substitution),
        ("(rm -rf x)", Opaque::Construct("a subshell ( ... )")),
        ("$CMD arg", Opaque::ComputedProgram),
        ("${CMD} arg", Opaque::ComputedProgram),
        ("/bin/r? x", Opaque::ComputedProgram),
        ("{rm,-rf,x}", Opaque::Syntax),
        ("~/bin/tool", Opaque::ComputedProgram),
        ("find . -exec {} ;", Opaque::ComputedProgram),
        ("echo 'unbalanced", Opaque::Syntax),
        ("echo trailing\\", Opaque::Syntax),
        ("ls # a comment", Opaque::Comment),
        ("ls\nrm x", Opaque::Newline),
        ("ls & rm x", Opaque::Background),
        ("cat <<< hi", Opaque::HereDocument),
        ("cat <<EOF", Opaque::Syntax),
        ("bash -c $'rm x'", Opaque::SpecialQuoting),
        ("echo $HOME", Opaque::Expansion),
        ("printf -v 'a[$(id)]' 1", Opaque::SubstitutionText),
        ("timeout 5 *", Opaque::WrapperExpansion),
        ("*", Opaque::ComputedProgram),
        ("nice -n 1 ls *", Opaque::WrapperExpansion),
        ("env -S 'rm x'", Opaque::WrapperOption),
        ("timeout --bogus 5 rm", Opaque::WrapperOption),
        ("sh -c", Opaque::WrapperOption),
        (
            "sh -c 'sh -c \"sh -c \\\"sh -c \\\\\\\"sh -c ls\\\\\\\"\\\"\"'",
            Opaque::TooDeep,
        ),
    ] {
        assert_eq!(effective_commands(line), Err(why), "{line}");
    }
}

#[test]
fn a_shell_running_a_file_or_stdin_is_the_shell_itself() {
    // `bash script.sh -c x` runs script.sh: `-c` after the first operand is the script's.
    assert_eq!(programs("bash script.sh -c 'ls'"), list(&["bash"]));
    assert_eq!(programs("bash -s < /dev/null"), list(&["bash"]));
    assert_eq!(programs("bash --norc --noprofile -ec 'ls'"), list(&["ls"]));
}

#[test]
fn shell_options_that_read_a_file_or_change_settings_are_opaque() {
    for line in [
        "bash -lc ls",
        "bash -l -c ls",
        "sh -ic ls",
        "bash --login -c ls",
        "bash --lo -c ls",
        "bash --rcfile x -c ls",
        "bash --norc --rcfile x -c ls",
        "bash --init-file x -c ls",
        "bash --init=x -c ls",
        "bash -o pipefail -c ls",
        "bash -O extglob -c ls",
        "bash +O extglob -c ls",
        "bash +e -c ls",
        "bash -l script.sh",
    ] {
        assert_eq!(
            effective_commands(line),
            Err(Opaque::ShellStartupFile),
            "{line}"
        );
    }
    assert_eq!(
        effective_commands("bash --debugger -c ls"),
        Err(Opaque::WrapperOption)
    );
    // Shells that read startup files for every script are never unwrapped.
    for shell in ["zsh", "fish", "csh", "tcsh"] {
        assert_eq!(programs(&format!("{shell} -c ls")), list(&[shell]));
    }
}

#[test]
fn words_a_wrapper_substitutes_are_expansions() {
    for line in [
        "xargs -I% sh -c 'ls %'",
        "xargs -I % sh -c 'ls %'",
        "xargs -i sh -c 'ls {}'",
        "xargs -i@ sh -c 'ls @'",
        "xargs --replace=@ sh -c 'ls @'",
        "xargs --replace sh -c 'ls {}'",
        "xargs -I% sh -c ls %",
        "xargs -I% env %",
        "nice xargs -I% timeout 5 %",
        "find . -exec sh -c 'ls {}' ;",
        "find . -execdir bash -c 'x{}y' +",
        "find . -exec env {} ;",
        "find . -execdir ./tool {} ;",
        "find . -okdir bin/tool ;",
        "xargs xargs",
        "xargs -0 xargs -0",
        "xargs nice",
        "xargs timeout 5",
        "xargs env -i",
        "xargs find .",
        "xargs find . -exec",
        "env xargs nohup",
    ] {
        assert!(
            matches!(
                effective_commands(line),
                Err(Opaque::WrapperExpansion | Opaque::ComputedProgram)
            ),
            "{line}: {:?}",
            effective_commands(line)
        );
    }
    // A plain program may take substituted words; they are marked as varying.
    let commands = effective_commands("xargs -I% ls -l %").unwrap();
    assert_eq!(commands[0].program, "ls");
    assert!(commands[0].args_vary);
    let commands = effective_commands("find . -exec wc -l {} + ; ls x").unwrap();
    assert!(!commands[0].args_vary && commands[1].args_vary && !commands[2].args_vary);
    assert!(effective_commands("xargs head").unwrap()[0].args_vary);
}

#[test]
fn a_wrapper_chain_as_long_as_the_line_does_not_recurse() {
    let line = format!("{}ls", "nice ".repeat(200_000));
    assert_eq!(programs(&line), list(&["ls"]));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(super::fuzz_cases(512)))]

    /// Random lines never panic, and a `$(...)` anywhere outside single quotes is never
    /// mistaken for something judgeable.
    #[test]
    fn random_lines_never_panic_and_substitutions_stay_opaque(
        prefix in "[ -~\n]{0,40}",
        inner in "[a-z ]{0,10}",
        suffix in "[ -~]{0,20}",
    ) {
        let _ = effective_commands(&prefix);
        let line = format!("{prefix}$({inner}){suffix}");
        if let Ok(commands) = effective_commands(&line) {
            // Only possible when the substitution sat inside single quotes.
            prop_assert!(prefix.contains('\'') || prefix.contains('\\'), "{line:?} -> {commands:?}");
        }
    }

    #[test]
    fn arbitrary_unicode_never_panics(line in "\\PC{0,200}") {
        let _ = effective_commands(&line);
    }
}
