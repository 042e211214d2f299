//! The binaries the images carry, with their debug info split off.
//!
//! `cargo build --profile dist` (like `--release`) leaves line tables in the binaries (backtraces
//! keep file and line), which makes them several times larger than their
//! code. The images get the binaries without any `.debug_*` section, each
//! with a `.gnu_debuglink` naming its `<binary>.debug` file; those files
//! (the DWARF alone, `objcopy --only-keep-debug`) stay outside the images, so
//! a crash's addresses can still be resolved to lines later
//! (`gdb -s agent-service.debug`, `addr2line -e agent-service.debug`).
//!
//! The symbol table goes with the debug info (it is 7 MB of agent-service's
//! 35): a panic still reports its message and source location (those are
//! constants in the code), and a backtrace's addresses resolve to function,
//! file and line against the `.debug` file.

use std::{
    path::{Path, PathBuf},
    process::Command,
};

use object::{Object, ObjectSection};

/// The binaries the service images carry, by file name.
pub const BINARIES: [&str; 2] = ["prompt-service", "agent-service"];

/// Where the split files go under the output directory.
pub const DEBUG_DIR: &str = "debug";

/// One binary, split.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split {
    /// File name (`agent-service`).
    pub name: String,
    /// The binary without debug info.
    pub binary: PathBuf,
    /// Its size in bytes.
    pub binary_bytes: u64,
    /// The debug info alone (`debug/<name>.debug`).
    pub debug: PathBuf,
    /// Its size in bytes.
    pub debug_bytes: u64,
}

/// What went wrong, naming the file or the command.
#[derive(Debug, thiserror::Error)]
pub enum DistError {
    /// An input binary is missing.
    #[error(
        "{}: no such binary; build it first: cargo build --profile dist --locked -p prompt-server -p agent-server --bins",
        .0.display()
    )]
    Missing(PathBuf),
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// objcopy could not be run or failed.
    #[error("{command}: {detail}")]
    Objcopy {
        /// The command line.
        command: String,
        /// Why (its stderr, or why it did not start).
        detail: String,
    },
    /// The result is not what the images need.
    #[error("{}: {problem}", path.display())]
    Elf {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        problem: String,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> DistError + '_ {
    move |source| DistError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Splits every binary of [`BINARIES`] found in `from` into `out/<name>`
/// (no debug info, a debug link) and `out/debug/<name>.debug`, and checks
/// both results.
pub fn split_all(from: &Path, out: &Path) -> Result<Vec<Split>, DistError> {
    BINARIES
        .iter()
        .map(|name| split(&from.join(name), out))
        .collect()
}

/// Splits one binary (see [`split_all`]).
pub fn split(input: &Path, out: &Path) -> Result<Split, DistError> {
    if !input.is_file() {
        return Err(DistError::Missing(input.to_path_buf()));
    }
    let name = input
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| DistError::Missing(input.to_path_buf()))?;
    let debug_dir = out.join(DEBUG_DIR);
    std::fs::create_dir_all(&debug_dir).map_err(io(&debug_dir))?;
    let debug = debug_dir.join(format!("{name}.debug"));
    let binary = out.join(&name);
    let partial = out.join(format!(".{name}.partial"));
    objcopy(&[
        "--only-keep-debug".as_ref(),
        input.as_os_str(),
        debug.as_os_str(),
    ])?;
    // The link records the debug file's name and CRC, so the debug file
    // must exist first. The partial file is renamed into place only once
    // it is complete, so an interrupted run never leaves a half binary.
    objcopy(&[
        "--strip-all".as_ref(),
        format!("--add-gnu-debuglink={}", debug.display()).as_ref(),
        input.as_os_str(),
        partial.as_os_str(),
    ])?;
    std::fs::rename(&partial, &binary).map_err(io(&binary))?;
    let sections = debug_sections(&binary)?;
    if !sections.is_empty() {
        return Err(DistError::Elf {
            path: binary,
            problem: format!("still has debug sections {sections:?}"),
        });
    }
    if !has_section(&binary, ".gnu_debuglink")? {
        return Err(DistError::Elf {
            path: binary,
            problem: "has no .gnu_debuglink".into(),
        });
    }
    if !has_section(&debug, ".debug_line")? {
        return Err(DistError::Elf {
            path: debug,
            problem: "holds no line tables (.debug_line): was the input built with debug info?"
                .into(),
        });
    }
    let size = |path: &Path| std::fs::metadata(path).map(|m| m.len()).map_err(io(path));
    Ok(Split {
        name,
        binary_bytes: size(&binary)?,
        debug_bytes: size(&debug)?,
        binary,
        debug,
    })
}

/// The debug-info sections of an ELF file (empty: none).
/// `.debug_gdb_scripts` is not one: rustc puts it in a loaded segment, and
/// it only names gdb's pretty-printer script (a few dozen bytes).
pub fn debug_sections(path: &Path) -> Result<Vec<String>, DistError> {
    Ok(section_names(path)?
        .into_iter()
        .filter(|n| n.starts_with(".debug_") || n.starts_with(".zdebug_"))
        .filter(|n| n != ".debug_gdb_scripts")
        .collect())
}

/// Whether an ELF file has a section called `name`.
pub fn has_section(path: &Path, name: &str) -> Result<bool, DistError> {
    Ok(section_names(path)?.iter().any(|n| n == name))
}

fn section_names(path: &Path) -> Result<Vec<String>, DistError> {
    let data = std::fs::read(path).map_err(io(path))?;
    let file = object::File::parse(&*data).map_err(|e| DistError::Elf {
        path: path.to_path_buf(),
        problem: format!("not an object file: {e}"),
    })?;
    Ok(file
        .sections()
        .filter_map(|s| s.name().ok().map(str::to_owned))
        .collect())
}

fn objcopy(args: &[&std::ffi::OsStr]) -> Result<(), DistError> {
    let command = std::iter::once("objcopy".to_owned())
        .chain(args.iter().map(|a| a.to_string_lossy().into_owned()))
        .collect::<Vec<_>>()
        .join(" ");
    let output = Command::new("objcopy")
        .args(args)
        .output()
        .map_err(|e| DistError::Objcopy {
            command: command.clone(),
            detail: format!("cannot run objcopy (install binutils): {e}"),
        })?;
    if output.status.success() {
        Ok(())
    } else {
        Err(DistError::Objcopy {
            command,
            detail: format!(
                "{}: {}",
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            ),
        })
    }
}
