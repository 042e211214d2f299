//! The `cron` tool of a session behind a router: its calls go, as AgentService cron job
//! calls, through the router to the replica that owns the agent's main session, where the
//! agent's jobs live (see "Replicas and cron jobs" in agent-service/README.md).

use std::{sync::Arc, time::Duration};

use async_trait::async_trait;
use openclaw_cron::{Job, JobPatch, JobSpec, Privilege};
use openclaw_proto::agent::v1::{self as pb, agent_service_client::AgentServiceClient};
use service_kit::BearerToken;
use tonic::{Request, Status, metadata::MetadataValue, transport::Channel};

use crate::cron_api;

/// How long a management call (add, list, update, remove) may take; a run started with
/// `run` takes as long as the run.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// The router, and the token this service's calls through it carry.
#[derive(Clone)]
pub struct CronRouter {
    url: String,
    channel: Channel,
    token: Option<BearerToken>,
}

impl std::fmt::Debug for CronRouter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CronRouter")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl CronRouter {
    /// A client of the router at `url` (`http://`; the router speaks HTTP/2 without TLS),
    /// connected on first use.
    pub fn new(url: &str, token: Option<BearerToken>) -> Result<Self, String> {
        let url = url.trim();
        if !url.starts_with("http://") {
            return Err(format!(
                "router URL {url:?}: give an http:// URL (the router serves HTTP/2 without TLS)"
            ));
        }
        let channel = tonic::transport::Endpoint::from_shared(url.to_owned())
            .map_err(|e| format!("router URL {url:?}: {e}"))?
            .connect_timeout(Duration::from_secs(2))
            .tcp_nodelay(true)
            .connect_lazy();
        Ok(Self {
            url: url.to_owned(),
            channel,
            token,
        })
    }

    /// The runtime's [`agent_runtime::CronForward`]: one [`RoutedCron`] per agent.
    pub fn forward(self) -> agent_runtime::CronForward {
        let router = Arc::new(self);
        Arc::new(move |agent_id: &str, privilege: Privilege| {
            Arc::new(RoutedCron {
                router: Arc::clone(&router),
                agent_id: agent_id.to_owned(),
                privilege,
            }) as Arc<dyn openclaw_tools::CronControl>
        })
    }
}

/// The header a forwarded cron call carries when the session behind it is sandboxed: the
/// replica that owns the jobs then manages them with that privilege. A caller can only lower
/// its own privilege with it; without it a call is the operator's.
pub const CRON_PRIVILEGE_HEADER: &str = "x-openclaw-cron-privilege";

/// The privilege a cron call asks to act with (see [`CRON_PRIVILEGE_HEADER`]).
pub(crate) fn privilege_of(metadata: &tonic::metadata::MetadataMap) -> Privilege {
    match metadata.get(CRON_PRIVILEGE_HEADER).map(|v| v.to_str()) {
        None => Privilege::Host,
        // Anything but an explicit "host" is the lesser privilege.
        Some(Ok("host")) => Privilege::Host,
        Some(_) => Privilege::Sandboxed,
    }
}

/// One agent's cron jobs, managed through the router.
#[derive(Debug)]
pub struct RoutedCron {
    router: Arc<CronRouter>,
    agent_id: String,
    privilege: Privilege,
}

impl RoutedCron {
    /// `message` routed to the replica owning the agent's main session.
    fn request<T>(&self, message: T, timeout: Option<Duration>) -> Result<Request<T>, String> {
        let mut request = Request::new(message);
        let key = format!("agent:{}:main", self.agent_id);
        let value = MetadataValue::try_from(key.as_str())
            .map_err(|_| format!("agent id {:?} cannot be sent in a header", self.agent_id))?;
        request
            .metadata_mut()
            .insert(service_kit::SESSION_KEY_HEADER, value);
        if self.privilege == Privilege::Sandboxed {
            request.metadata_mut().insert(
                CRON_PRIVILEGE_HEADER,
                MetadataValue::from_static(Privilege::Sandboxed.as_str()),
            );
        }
        if let Some(timeout) = timeout {
            request.set_timeout(timeout);
        }
        if let Some(token) = &self.router.token {
            token.apply(&mut request);
        }
        Ok(request)
    }

    fn client(&self) -> AgentServiceClient<Channel> {
        AgentServiceClient::new(self.router.channel.clone())
    }

    /// A failed call as a sentence for the model: the service's own message for the
    /// caller's mistakes, the router and the code for the rest.
    fn failed(&self, status: &Status) -> String {
        // A router's own 502/503/504 page: the replica was not reached.
        let status = &service_kit::gateway_unavailable(status.clone());
        match status.code() {
            tonic::Code::InvalidArgument
            | tonic::Code::NotFound
            | tonic::Code::FailedPrecondition
            | tonic::Code::AlreadyExists => status.message().to_owned(),
            code => format!(
                "the replica holding agent {}'s cron jobs did not answer through the router \
                 ({}): {code:?}: {}",
                self.agent_id,
                self.router.url,
                status.message()
            ),
        }
    }

    fn job(&self, job: pb::CronJob) -> Result<Job, String> {
        cron_api::job_of(job).map_err(|status| {
            format!(
                "the router answered with a job this replica cannot read: {}",
                status.message()
            )
        })
    }
}

#[async_trait]
impl openclaw_tools::CronControl for RoutedCron {
    async fn add(&self, spec: JobSpec) -> Result<Job, String> {
        let request = self.request(
            pb::AddCronJobRequest {
                agent_id: self.agent_id.clone(),
                spec: Some(cron_api::spec_pb(&spec)),
            },
            Some(CALL_TIMEOUT),
        )?;
        let job = self
            .client()
            .add_cron_job(request)
            .await
            .map_err(|s| self.failed(&s))?;
        self.job(job.into_inner())
    }

    async fn list(&self) -> Result<Vec<Job>, String> {
        let request = self.request(
            pb::ListCronJobsRequest {
                agent_id: self.agent_id.clone(),
            },
            Some(CALL_TIMEOUT),
        )?;
        let listed = self
            .client()
            .list_cron_jobs(request)
            .await
            .map_err(|s| self.failed(&s))?;
        listed
            .into_inner()
            .jobs
            .into_iter()
            .map(|job| self.job(job))
            .collect()
    }

    async fn update(&self, id: &str, patch: JobPatch) -> Result<Job, String> {
        let request = self.request(
            pb::UpdateCronJobRequest {
                agent_id: self.agent_id.clone(),
                id: id.to_owned(),
                patch: Some(cron_api::patch_pb(&patch)),
            },
            Some(CALL_TIMEOUT),
        )?;
        let job = self
            .client()
            .update_cron_job(request)
            .await
            .map_err(|s| self.failed(&s))?;
        self.job(job.into_inner())
    }

    async fn remove(&self, id: &str) -> Result<Job, String> {
        let request = self.request(
            pb::RemoveCronJobRequest {
                agent_id: self.agent_id.clone(),
                id: id.to_owned(),
            },
            Some(CALL_TIMEOUT),
        )?;
        let job = self
            .client()
            .remove_cron_job(request)
            .await
            .map_err(|s| self.failed(&s))?;
        self.job(job.into_inner())
    }

    async fn run_now(&self, id: &str, caller_session: &str) -> Result<String, String> {
        // A run that would go to the calling session is queued, not waited for (it would
        // wait for the very turn that asks).
        let session = self
            .list()
            .await?
            .into_iter()
            .find(|job| job.id == id.trim())
            .map(|job| job.run_session_key());
        let queue_only = session.as_deref() == Some(caller_session);
        let request = self.request(
            pb::RunCronJobRequest {
                agent_id: self.agent_id.clone(),
                id: id.to_owned(),
                queue_only,
            },
            queue_only.then_some(CALL_TIMEOUT),
        )?;
        let answer = self
            .client()
            .run_cron_job(request)
            .await
            .map_err(|s| self.failed(&s))?
            .into_inner();
        if queue_only && answer.status() == pb::CronRunStatus::Unspecified {
            return Ok(agent_runtime::run::describe_queued(&answer.session_key));
        }
        Ok(agent_runtime::run::describe_cron_outcome(
            &cron_api::outcome_of(answer),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_router_url_must_be_plain_http() {
        let error = CronRouter::new("https://router:50052", None).unwrap_err();
        assert!(error.contains("http://"), "{error}");
    }

    #[tokio::test]
    async fn a_router_that_does_not_answer_is_an_error_never_an_empty_list() {
        // A port nothing listens on.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .unwrap_or_else(|e| panic!("{e}"));
        let router = CronRouter::new(&format!("http://127.0.0.1:{port}"), None)
            .unwrap_or_else(|e| panic!("{e}"));
        let cron = (router.forward())("planner", Privilege::Host);
        let error = cron.list().await.unwrap_err();
        assert!(
            error.contains("agent planner's cron jobs did not answer through the router"),
            "{error}"
        );
        let error = cron.run_now("j1", "agent:planner:main").await.unwrap_err();
        assert!(error.contains("Unavailable"), "{error}");
    }
}
