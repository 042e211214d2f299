//! gRPC shell of agent-service: converts `openclaw.agent.v1` messages to
//! runtime calls, maps runtime errors onto status codes, and serves the
//! service with health, reflection, limits and a graceful drain.
//!
//! It holds no agent logic (that is `agent-runtime`).

mod approvals_api;
mod convert;
mod cron_api;
mod cron_forward;
mod error;
pub mod flags;
mod listeners;
mod own_secrets;
pub mod ownership;
mod parts;
mod readiness;
mod redact;

mod serve;
mod service;
mod sessions_reply;

pub use cron_forward::{CronRouter, RoutedCron};
pub use error::status_of;
pub use listeners::open_listeners;
pub use own_secrets::OwnCredentials;
pub use ownership::Replica;
pub use serve::{ServeConfig, ServeError, serve};
pub use service::{AgentServiceImpl, ServedWith};
