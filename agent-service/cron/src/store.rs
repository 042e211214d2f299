//! The jobs file: every job of every agent in one JSON document, replaced whole on each change
//! (temp file, fsync, rename, fsync of the directory), so a crash leaves the old file or the
//! new one, never a mix.

use std::{
    collections::BTreeMap,
    fs,
    io::{self, Write},
    path::{Path, PathBuf},
};

use jiff::{Timestamp, tz::TimeZone};
use serde::{Deserialize, Serialize};

use crate::{InvalidJob, Job, JobPatch, JobSpec};

/// The file's format version. Version 2 records each job's [`crate::Privilege`].
const VERSION: u32 = 2;

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    version: u32,
    jobs: Vec<Job>,
}

/// The older formats this build reads, each with the step that brings a job of it to the
/// next version.
const MIGRATIONS: &[(u32, MigrateJob)] = &[(1, privilege_unknown)];

/// One migration step, applied to each job of the file as JSON.
type MigrateJob = fn(&mut serde_json::Value);

/// Version 1 did not record who created a job: it may have been a sandboxed session, so it
/// gets the lesser privilege (an operator re-saves it through the API to raise it).
fn privilege_unknown(job: &mut serde_json::Value) {
    if let Some(object) = job.as_object_mut() {
        object.insert(
            "privilege".to_owned(),
            serde_json::Value::String(crate::Privilege::Sandboxed.as_str().to_owned()),
        );
    }
}

/// The jobs, in memory, with the file they are saved to.
#[derive(Debug)]
pub struct JobStore {
    path: PathBuf,
    jobs: BTreeMap<String, Job>,
}

/// What opening the store found.
#[derive(Debug)]
pub struct Opened {
    /// The store.
    pub store: JobStore,
    /// A file that could not be read, moved aside: where it went and why.
    pub moved_aside: Option<(PathBuf, String)>,
}

/// A store that cannot be opened or saved.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Reading, writing or moving the file failed.
    #[error("cron jobs file {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> StoreError + '_ {
    move |source| StoreError::Io {
        path: path.to_owned(),
        source,
    }
}

impl JobStore {
    /// Opens the jobs file at `path` (missing: no jobs). A file that does not parse, or holds
    /// a job twice, is renamed to `<name>.corrupt-<ms>` and reported; the store starts empty.
    pub fn open(path: impl Into<PathBuf>, now: Timestamp) -> Result<Opened, StoreError> {
        let path = path.into();
        let bytes = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Ok(Opened {
                    store: JobStore {
                        path,
                        jobs: BTreeMap::new(),
                    },
                    moved_aside: None,
                });
            }
            Err(e) => return Err(io_err(&path)(e)),
        };
        match parse(&bytes) {
            Ok(jobs) => Ok(Opened {
                store: JobStore { path, jobs },
                moved_aside: None,
            }),
            Err(reason) => {
                let mut aside = path.clone().into_os_string();
                aside.push(format!(".corrupt-{}", now.as_millisecond()));
                let aside = PathBuf::from(aside);
                fs::rename(&path, &aside).map_err(io_err(&path))?;
                Ok(Opened {
                    store: JobStore {
                        path,
                        jobs: BTreeMap::new(),
                    },
                    moved_aside: Some((aside, reason)),
                })
            }
        }
    }

    /// The file the store saves to.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes every job to the file: temp file, fsync, rename, fsync of the directory.
    pub fn save(&self) -> Result<(), StoreError> {
        let file = File {
            version: VERSION,
            jobs: self.jobs.values().cloned().collect(),
        };
        let mut text = serde_json::to_vec_pretty(&file).map_err(|e| StoreError::Io {
            path: self.path.clone(),
            source: io::Error::other(e),
        })?;
        text.push(b'\n');
        let dir = self
            .path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        fs::create_dir_all(dir).map_err(io_err(dir))?;
        let mut tmp = self.path.clone().into_os_string();
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        {
            let mut f = open_private(&tmp).map_err(io_err(&tmp))?;
            f.write_all(&text).map_err(io_err(&tmp))?;
            f.sync_all().map_err(io_err(&tmp))?;
        }
        fs::rename(&tmp, &self.path).map_err(io_err(&self.path))?;
        fs::File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(io_err(dir))?;
        Ok(())
    }

    /// Adds a job for `agent_id`; the store chooses its id. Not saved until [`JobStore::save`].
    pub fn add(
        &mut self,
        agent_id: &str,
        spec: JobSpec,
        default_tz: &TimeZone,
        now: Timestamp,
    ) -> Result<&Job, InvalidJob> {
        let id = uuid::Uuid::new_v4().simple().to_string()[..12].to_owned();
        let job = Job::new(id.clone(), agent_id.to_owned(), spec, default_tz, now)?;
        Ok(self.jobs.entry(id).or_insert(job))
    }

    /// Puts a job in as it is (tests, imports).
    pub fn insert(&mut self, job: Job) {
        self.jobs.insert(job.id.clone(), job);
    }

    /// Changes a job.
    pub fn update(
        &mut self,
        id: &str,
        patch: JobPatch,
        default_tz: &TimeZone,
        now: Timestamp,
    ) -> Result<Option<&Job>, InvalidJob> {
        let Some(job) = self.jobs.get_mut(id) else {
            return Ok(None);
        };
        job.apply(patch, default_tz, now)?;
        Ok(Some(job))
    }

    /// Removes a job.
    pub fn remove(&mut self, id: &str) -> Option<Job> {
        self.jobs.remove(id)
    }

    /// One job.
    pub fn get(&self, id: &str) -> Option<&Job> {
        self.jobs.get(id)
    }

    /// One job, to change its state.
    pub fn get_mut(&mut self, id: &str) -> Option<&mut Job> {
        self.jobs.get_mut(id)
    }

    /// Every job, by id.
    pub fn jobs(&self) -> impl Iterator<Item = &Job> {
        self.jobs.values()
    }

    /// An agent's jobs (every agent's with `None`), oldest first.
    pub fn list(&self, agent_id: Option<&str>) -> Vec<&Job> {
        let mut jobs: Vec<&Job> = self
            .jobs
            .values()
            .filter(|j| agent_id.is_none_or(|a| j.agent_id == a))
            .collect();
        jobs.sort_by(|a, b| {
            a.agent_id
                .cmp(&b.agent_id)
                .then(a.created_at.cmp(&b.created_at))
                .then(a.id.cmp(&b.id))
        });
        jobs
    }

    /// How many jobs there are.
    pub fn len(&self) -> usize {
        self.jobs.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.jobs.is_empty()
    }
}

fn parse(bytes: &[u8]) -> Result<BTreeMap<String, Job>, String> {
    let mut raw: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    let version = raw
        .get("version")
        .and_then(serde_json::Value::as_u64)
        .and_then(|v| u32::try_from(v).ok())
        .ok_or("no format version")?;
    if version > VERSION {
        return Err(format!(
            "format version {version} is newer than this build reads ({VERSION})"
        ));
    }
    let mut at = version;
    while at < VERSION {
        let Some((_, step)) = MIGRATIONS.iter().find(|(from, _)| *from == at) else {
            return Err(format!(
                "format version {version} (this build reads {VERSION} and migrates none older)"
            ));
        };
        if let Some(jobs) = raw
            .get_mut("jobs")
            .and_then(serde_json::Value::as_array_mut)
        {
            jobs.iter_mut().for_each(step);
        }
        at += 1;
    }
    raw["version"] = serde_json::Value::from(VERSION);
    let file: File = serde_json::from_value(raw).map_err(|e| e.to_string())?;
    let mut jobs = BTreeMap::new();
    for job in file.jobs {
        let id = job.id.clone();
        if jobs.insert(id.clone(), job).is_some() {
            return Err(format!("job {id:?} appears twice"));
        }
    }
    Ok(jobs)
}

#[cfg(unix)]
fn open_private(path: &Path) -> io::Result<fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
}

#[cfg(not(unix))]
fn open_private(path: &Path) -> io::Result<fs::File> {
    fs::File::create(path)
}
