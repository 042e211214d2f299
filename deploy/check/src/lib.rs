//! Dev-only checks of `deploy/`, run by `cargo test --workspace` with no
//! Docker engine and no cluster, and the `deploy-check` command for what
//! needs more (a real engine).
//!
//! - [`compose`]: reads `compose.yaml` into typed structs (an unknown key is
//!   an error, so a typo such as `helthcheck` fails), checks what Compose
//!   itself does not (build contexts and Dockerfiles exist, every
//!   `service_healthy` target has a health check, ports and URLs agree,
//!   services reachable from other hosts read their tokens from secrets), and
//!   turns each service into the native process it describes ([`native`]):
//!   the image's entrypoint and environment from the [`dockerfile`], the env
//!   file and `environment:` on top, container paths and ports mapped onto a
//!   temporary root and loopback.
//! - [`k8s`]: loads the manifests listed by `kustomization.yaml` and checks
//!   their cross references; [`review`] holds them to what an operator
//!   signs off on (spread over nodes, disruption budgets, pinned images,
//!   startup probes, graceful stops, network policies); [`haproxy`] checks
//!   the router's HAProxy config against them and maps it onto loopback for
//!   the router test, which runs HAProxy from Debian packages ([`install`]).
//! - [`npm`] installs programs from npm packages: the `buf` CLI, with which
//!   the tests lint the proto files and check them for breaking changes
//!   against `proto/baseline.binpb` (the API as last released).
//! - [`dist`] and [`engine`] are the `deploy-check` command's: the release
//!   binaries with their debug info split off, and the compose file run on
//!   a real Docker engine (outside `cargo test`: CI has no engine).
//!
//! It is not a Compose or Kubernetes implementation: it knows the keys our
//! files use and refuses the rest, and it checks references, not schemas
//! (`docker compose config` and `kubernetes-validate` do that; see
//! deploy/README.md).

pub mod calls;
pub mod compose;
pub mod dist;
pub mod dockerfile;
pub mod engine;
pub mod haproxy;
pub mod install;
pub mod k8s;
pub mod native;
pub mod npm;
pub mod review;
mod yaml;

use std::path::PathBuf;

/// Why a deploy file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The file is not YAML of the expected shape.
    #[error("{path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong, with the YAML location when known.
        message: String,
    },
}

/// Reads a file, naming it in the error.
pub(crate) fn read(path: &std::path::Path) -> Result<String, Error> {
    std::fs::read_to_string(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })
}
