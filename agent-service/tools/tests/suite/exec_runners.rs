//! Programs a covered line runs without judging them: a builtin's name that a wrapper looks up
//! on PATH, a wrapper in disguise, options that change a program's environment or make a
//! shell read a profile, and shell builtins that change what later commands run. Each line
//! here was covered before the rule it tests.

use std::path::Path;

use openclaw_tools::command::{Opaque, effective_commands};
use openclaw_tools::{ExecPolicy, Verdict};

use super::exec_corpus::Bins;

fn runs(policy: &ExecPolicy, line: &str) -> bool {
    matches!(policy.verdict(line), Verdict::Allow { .. })
}

fn refused_all(policy: &ExecPolicy, lines: &[&str]) {
    let approved: Vec<String> = lines
        .iter()
        .filter(|line| runs(policy, line))
        .map(|line| format!("{line:?}"))
        .collect();
    assert!(approved.is_empty(), "approved: {approved:#?}");
}

fn allowed_all(policy: &ExecPolicy, lines: &[&str]) {
    for line in lines {
        let judgement = policy.judge_command(line);
        assert!(judgement.allowed, "{line}: {}", judgement.reason);
    }
}

/// The system's own programs only, nothing allowlisted.
fn system() -> ExecPolicy {
    ExecPolicy::allowlist(Vec::<String>::new()).with_search_path("/usr/bin:/bin")
}

#[test]
fn a_builtin_started_by_a_wrapper_is_the_file_path_finds() {
    // Files named like the harmless builtins, first on PATH and outside the system
    // directories: the shell never runs them, but `xargs`, `env`, `find -exec` ... do.
    let b = Bins::new(&["ls", "find", "echo", "true", "pwd"]);
    let p = b.policy(&["ls", "find"]);
    refused_all(
        &p,
        &[
            "xargs",
            "echo a | xargs",
            "xargs echo",
            "xargs -I{} echo {}",
            "env echo hi",
            "env -- echo",
            "nice true",
            "timeout 5 pwd",
            "nohup echo",
            "stdbuf -oL echo",
            "setsid echo",
            "exec echo hi",
            "find . -exec echo {} ;",
            "find . -exec true ;",
            "sh -c 'xargs echo'",
        ],
    );
    let reason = p.judge_command("xargs").reason;
    assert!(reason.contains("not as the shell's builtin"), "{reason}");
    // Run by the shell they are the builtins, whatever PATH holds.
    allowed_all(
        &p,
        &[
            "echo hi",
            "true",
            "pwd",
            "ls | head -n 1; echo done",
            "sh -c 'echo hi'",
            "command echo hi",
            "find . -exec ls {} ;",
        ],
    );
    // An entry for the file covers it, as for any program ("allow-always" proposes it).
    let echo = b.path("echo").display().to_string();
    assert_eq!(p.always_patterns("xargs"), std::slice::from_ref(&echo));
    allowed_all(&p.clone().with_allowlist([echo]), &["xargs", "env echo hi"]);
    // The system's files are covered where a wrapper starts them.
    allowed_all(
        &system(),
        &["xargs", "env echo hi", "nice true", "timeout 5 pwd"],
    );
}

#[test]
fn a_wrapper_before_a_builtin_must_be_the_systems() {
    let b = Bins::new(&["env", "nice", "xargs", "timeout"]);
    let p = b.policy(&[]);
    refused_all(&p, &["env echo hi", "nice true", "xargs", "timeout 5 pwd"]);
    let reason = p.judge_command("env echo hi").reason;
    assert!(
        reason.contains("outside the system directories"),
        "{reason}"
    );
}

#[test]
fn exec_command_and_time_found_on_path_outside_the_system_are_not_trusted() {
    // dash has no `time` keyword, and a wrapper runs `command` or `time` as files.
    let b = Bins::new(&["ls", "time", "command"]);
    let p = b.policy(&["ls"]);
    refused_all(&p, &["time ls", "env time ls", "nice command ls"]);
    let reason = p.judge_command("env time ls").reason;
    assert!(
        reason.contains("outside the system directories"),
        "{reason}"
    );
    // Not found on PATH, they are the shell's own.
    let plain = Bins::new(&["ls"]);
    allowed_all(
        &plain.policy(&["ls"]),
        &["command ls", "exec ls", "time -p ls"],
    );
}

#[test]
fn a_login_exec_and_argument_assignments_are_not_understood() {
    let p = system();
    // Only default safe bins: `exec -l` makes the shell a login shell, which reads
    // ~/.profile first.
    refused_all(
        &p,
        &[
            "exec -l bash -c 'wc -l'",
            "exec -l sh -c 'echo hi'",
            "exec -cl sh -c 'echo hi'",
        ],
    );
    for line in [
        "exec -l sh -c ls",
        "bash -kc 'ls LD_PRELOAD=./x.so'",
        "bash -k -c 'ls PATH=.'",
        "ksh -Ec ls",
        "mksh -Tc ls 'rm -rf x'",
        "sh -p -c ls",
    ] {
        assert!(
            matches!(
                effective_commands(line),
                Err(Opaque::WrapperOption | Opaque::ShellStartupFile)
            ),
            "{line}: {:?}",
            effective_commands(line)
        );
    }
    let b = Bins::new(&["ls"]);
    let with_ls = b.policy(&["ls"]);
    refused_all(
        &with_ls,
        &["bash -kc 'ls LD_PRELOAD=./x.so'", "sh -k -c ls"],
    );
    allowed_all(
        &with_ls,
        &["sh -ec ls", "bash -x -c 'ls | wc -l'", "exec -c ls"],
    );
}

#[test]
fn wrapper_options_that_change_the_environment_count_as_setting_it() {
    let b = Bins::new(&["ls"]);
    let p = b.policy(&["ls"]);
    refused_all(
        &p,
        &[
            // `xargs` sets the variable to the slot number: PATH=0 runs ./0/ls.
            "echo | xargs --process-slot-var=PATH ls",
            "xargs --process-slot-var PATH ls",
            "xargs --process-slot-var=BASH_ENV bash -c ls",
            "xargs --process-slot-var=LD_PRELOAD ls",
            // Removing PATH or the whole environment finds the program on a default path.
            "env -u PATH ls",
            "env -uPATH ls",
            "env --unset=PATH ls",
            "env --unset PATH ls",
            "env -iu HOME ls",
            "env -i ls",
            "env - ls",
            "env --ignore-environment ls",
            "command -p ls",
            "env -u BASH_ENV -u PATH sh -c ls",
        ],
    );
    let reason = p.judge_command("env -u PATH ls").reason;
    assert!(reason.contains("PATH"), "{reason}");
    allowed_all(
        &p,
        &[
            "env -u LANG ls",
            "xargs --process-slot-var=LANG ls",
            "env LANG=C ls",
        ],
    );
}

#[test]
fn shell_builtins_that_set_variables_or_move_the_shell_are_never_covered() {
    // Files of these names exist on some systems (`/usr/bin/read` ...), and an allowlist
    // entry may cover them; the shell still runs its builtin.
    let names = [
        "ls", "printf", "read", "getopts", "set", "shopt", "pushd", "popd",
    ];
    let b = Bins::new(&names);
    let p = b.policy(&names);
    refused_all(
        &p,
        &[
            "printf -v PATH %s /tmp/x; ls",
            "bash -c 'printf -v PATH %s /tmp/x; ls'",
            "printf -v x '%s[%s(id)]' a '$'; printf -v 'y[x]' 1",
            "printf -vPATH /tmp/x",
            "printf -v PS4 '%s(id)' '$'",
            "read PATH",
            "getopts a: PATH",
            "set -k; ls LD_PRELOAD=./x.so",
            "shopt -s expand_aliases",
            "pushd /tmp",
            "popd",
        ],
    );
    for line in ["read PATH", "printf -v PATH x", "set -k"] {
        assert!(p.always_patterns(line).is_empty(), "{line}");
    }
    allowed_all(
        &p,
        &["printf '%s\\n' a b", "printf -- -v", "printf - ", "ls"],
    );
}

#[test]
fn a_runner_under_another_name_is_not_covered() {
    let system_file = |name: &str| Path::new("/usr/bin").join(name).canonicalize().unwrap();
    let runners = ["find", "env", "xargs", "nice", "timeout"];
    let dir = tempfile::tempdir().unwrap();
    for (link, name) in ["f", "e", "x", "n", "t"].iter().zip(runners) {
        std::os::unix::fs::symlink(system_file(name), dir.path().join(link)).unwrap();
    }
    std::os::unix::fs::symlink(system_file("find"), dir.path().join("find")).unwrap();
    std::os::unix::fs::symlink(system_file("env"), dir.path().join("env")).unwrap();
    let entries: Vec<String> = runners
        .iter()
        .map(|n| system_file(n).display().to_string())
        .collect();
    let p = ExecPolicy::allowlist(entries)
        .with_search_path("/usr/bin:/bin")
        .with_cwd(dir.path());
    refused_all(
        &p,
        &[
            "./f . -exec rm -rf x ;",
            "./f . -name x",
            "./e rm -rf x",
            "./env rm -rf x",
            "./x rm",
            "./n rm -rf x",
            "./t 5 rm -rf x",
            "./find . -exec rm -rf x ;",
        ],
    );
    let reason = p.judge_command("./f . -exec rm -rf x ;").reason;
    assert!(
        reason.contains("judged only when named as itself"),
        "{reason}"
    );
    allowed_all(&p, &["find . -name x", "./find . -name x", "env"]);
    let bare = system().with_cwd(dir.path());
    for line in ["./f .", "./e rm", "./x ls"] {
        assert!(bare.always_patterns(line).is_empty(), "{line}");
    }
}

#[test]
fn a_busybox_applet_is_not_the_file_its_name_finds() {
    // busybox runs its own code for an applet whatever file of that name PATH holds, so an
    // entry or a safe bin for that file says nothing about it. With busybox installed, so
    // the refusal is not that it is missing.
    let busybox = agent_testkit::packages::ensure_program("busybox", "busybox")
        .unwrap_or_else(|e| panic!("busybox is needed: {e}"));
    let b = Bins::new(&["ls", "wc"]);
    let p = b.policy(&["ls", "wc"]);
    allowed_all(&p, &["ls", "wc x"]);
    refused_all(
        &p,
        &[
            "busybox ls",
            "busybox wc x",
            &format!("{} ls", busybox.display()),
            "env busybox ls",
            "nice busybox wc",
        ],
    );
    refused_all(
        &system(),
        &["busybox wc -l x", "busybox head -n 1 x", "busybox true"],
    );
    let reason = p.judge_command("busybox ls").reason;
    assert!(reason.contains("applet"), "{reason}");
    assert!(!reason.contains("not found"), "{reason}");
}

#[test]
fn an_allowlisted_find_does_not_write_files_the_line_names() {
    let find = Path::new("/usr/bin/find").canonicalize().unwrap();
    let p = ExecPolicy::allowlist([find.display().to_string()]).with_search_path("/usr/bin:/bin");
    allowed_all(
        &p,
        &[
            "find . -name x",
            "find . -print0",
            "find . -printf %p",
            "find . -ls",
        ],
    );
    refused_all(
        &p,
        &[
            "find . -fprint .profile",
            "find . -fprint0 x",
            "find . -fprintf .git/hooks/pre-commit 'id\\n'",
            "find . -name x -fls out",
            "find . -fprintf /dev/null x",
        ],
    );
    let reason = p.judge_command("find . -fls out").reason;
    assert!(reason.contains("-fls"), "{reason}");
}

#[test]
fn a_locale_or_zone_set_to_a_path_is_not_a_harmless_variable() {
    // glibc loads a locale named by an absolute path and a zone file by a path relative to
    // the zone directory, and trusts their contents; a name stays harmless.
    let b = Bins::new(&["ls"]);
    let p = b.policy(&["ls"]);
    allowed_all(
        &p,
        &[
            "LANG=C.UTF-8 ls",
            "LC_ALL=C ls",
            "TZ=Europe/Paris ls",
            "TZ=:Europe/Paris ls",
            "env TZ=UTC LC_TIME=de_DE.UTF-8 ls",
            "TERM=xterm-256color ls",
        ],
    );
    refused_all(
        &p,
        &[
            "LC_ALL=/tmp/x ls",
            "LC_CTYPE=../../tmp/x ls",
            "LANG=/tmp/l ls",
            "LANGUAGE=../../tmp ls",
            "TZ=/tmp/zone ls",
            "TZ=:/tmp/zone ls",
            "TZ=../../tmp/zone ls",
            "env LC_ALL=/tmp/x ls",
            "sh -c 'LC_MESSAGES=/x ls'",
            "TERM=../../tmp/t ls",
        ],
    );
    let reason = p.judge_command("TZ=/tmp/zone ls").reason;
    assert!(reason.contains("TZ to a path"), "{reason}");
}
