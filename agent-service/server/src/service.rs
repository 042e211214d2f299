//! AgentService: validate, convert, forward to the runtime, stream results.

use std::{pin::Pin, sync::Arc};

use agent_runtime::{Runtime, TranscriptItem, config::resolve::AgentRuntime};
use futures_util::{StreamExt, stream};
use openclaw_proto::agent::v1 as pb;
use pb::agent_service_server::AgentService;
use tokio_stream::{Stream, wrappers::ReceiverStream};
use tonic::{Request, Response, Status};

use crate::{convert, error::status_of, ownership::routing_header, parts};

/// The gRPC service over one runtime.
#[derive(Debug, Clone)]
pub struct AgentServiceImpl {
    runtime: Arc<Runtime>,
    served: ServedWith,
}

/// How the server was started, as GetServiceStatus reports it.
#[derive(Debug, Clone, Default)]
pub struct ServedWith {
    /// It speaks TLS.
    pub tls: bool,
    /// Callers need a client certificate.
    pub client_certificates: bool,
    /// Callers need a bearer token.
    pub bearer_tokens: bool,
    /// prompt-service's reachability; None when prompts render in this process.
    pub prompt_reachability: Option<tokio::sync::watch::Receiver<bool>>,
    /// The AgentService health status as published (true: SERVING); None: decided from the
    /// config and prompt-service's reachability alone.
    pub serving: Option<tokio::sync::watch::Receiver<bool>>,
    /// Process start, ms since the epoch (0: unknown).
    pub started_at_ms: i64,
    /// This replica among those sharing the sessions: calls about sessions another replica
    /// owns are refused.
    pub replica: crate::Replica,
    /// Turns true when the server begins to stop: open WatchSession streams end then, with
    /// UNAVAILABLE, instead of holding the drain to its end. None: never.
    pub stopping: Option<tokio::sync::watch::Receiver<bool>>,
}

/// The status a watch ends with when the server stops: UNAVAILABLE, which clients take as
/// "connect again" (to another replica behind a router, or to this one once it is back).
fn stopping_status() -> Status {
    Status::unavailable(
        "agent-service is shutting down: this watch ends here; watch the session again \
         (runs in progress finish or are saved as interrupted)",
    )
}

impl AgentServiceImpl {
    /// The agent and session key a reference names; no reference or no
    /// target means the default agent's main session, and an id is looked up.
    async fn key_of(&self, session: Option<pb::SessionRef>) -> Result<(String, String), Status> {
        let pb::SessionRef { agent_id, target } = session.unwrap_or_default();
        match target {
            None => Ok((agent_id, String::new())),
            Some(pb::session_ref::Target::SessionKey(key)) => Ok((agent_id, key)),
            Some(pb::session_ref::Target::SessionId(id)) => {
                let target = agent_runtime::sessions::SessionTarget::Id(id);
                let info = self
                    .runtime
                    .sessions()
                    .get(&agent_id, &target)
                    .await
                    .map_err(status_of)?;
                Ok((agent_id, info.key.as_str().to_owned()))
            }
        }
    }

    /// A call about the session `session_key` of `agent_id`: refused unless this replica owns
    /// the session ([`crate::ownership`]), and, when it carries the routing header, unless the
    /// header names that session. A header naming another session than the body would run the
    /// body's session on a replica the router did not pick for it and split its state.
    async fn check_route(
        &self,
        metadata: &tonic::metadata::MetadataMap,
        agent_id: &str,
        session_key: &str,
    ) -> Result<(), Status> {
        let header = routing_header(metadata)?;
        if header.is_none() && self.served.replica.count() == 1 {
            // Not routed, and every session is this replica's: nothing to check.
            return Ok(());
        }
        let agent = self.runtime.agents().view(agent_id).map_err(status_of)?;
        let body =
            agent_runtime::sessions::key::normalize(&agent.id, session_key).map_err(status_of)?;
        if let Some(header) = header
            && header != body.as_str()
        {
            return Err(Status::invalid_argument(format!(
                "{}: {header:?} names another session than the request, which is for {:?}; \
                 send the request's full session key (the router routes by it)",
                service_kit::SESSION_KEY_HEADER,
                body.as_str()
            )));
        }
        self.served.replica.check(body.as_str(), header.is_some())
    }

    /// A cron job or exec allowlist call routed by the header must carry the agent's main
    /// session key: the router sends it where the main session lives, and the agent's jobs
    /// (and the allowlist managed over the API) live there too (its cron sessions,
    /// `agent:<id>:cron:<job>`, are routed the same way). This replica must own that session.
    async fn check_main_route(
        &self,
        metadata: &tonic::metadata::MetadataMap,
        agent_id: &str,
    ) -> Result<(), Status> {
        let header = routing_header(metadata)?;
        if header.is_none() && self.served.replica.count() == 1 {
            // Not routed, and every session is this replica's: nothing to check.
            return Ok(());
        }
        let agent = self.runtime.agents().view(agent_id).map_err(status_of)?;
        let main = agent_runtime::sessions::key::normalize(&agent.id, "").map_err(status_of)?;
        if let Some(header) = header
            && header != main.as_str()
        {
            return Err(Status::invalid_argument(format!(
                "{}: {header:?} is not agent {}'s main session key {:?}: cron job and allowlist \
                 calls are routed by the main session key, where the agent's jobs live",
                service_kit::SESSION_KEY_HEADER,
                agent.id,
                main.as_str()
            )));
        }
        self.served.replica.check(main.as_str(), header.is_some())
    }

    /// [`Self::check_route`] for a target by key or by id (an id is looked up, unless
    /// nothing needs its key: one replica and no header).
    async fn check_target_route(
        &self,
        metadata: &tonic::metadata::MetadataMap,
        agent_id: &str,
        target: &agent_runtime::sessions::SessionTarget,
    ) -> Result<(), Status> {
        let key = match target {
            agent_runtime::sessions::SessionTarget::Key(key) => key.clone(),
            agent_runtime::sessions::SessionTarget::Id(_) => {
                if routing_header(metadata)?.is_none() && self.served.replica.count() == 1 {
                    return Ok(());
                }
                let info = self
                    .runtime
                    .sessions()
                    .get(agent_id, target)
                    .await
                    .map_err(status_of)?;
                info.key.as_str().to_owned()
            }
        };
        self.check_route(metadata, agent_id, &key).await
    }

    /// The session a request names ([`convert::target_of`] on the field `session` picks), once
    /// [`Self::check_target_route`] has let it through.
    async fn routed_target<T>(
        &self,
        request: Request<T>,
        session: impl FnOnce(T) -> Option<pb::SessionRef>,
    ) -> Result<(String, agent_runtime::sessions::SessionTarget), Status> {
        let metadata = request.metadata().clone();
        let (agent, target) = convert::target_of(session(request.into_inner()));
        self.check_target_route(&metadata, &agent, &target).await?;
        Ok((agent, target))
    }

    /// The cron jobs of the agent a request names (the field `agent_id` picks), once
    /// [`Self::check_main_route`] has let it through, managed with the privilege the
    /// request carries; with the request itself.
    async fn cron_of<T>(
        &self,
        request: Request<T>,
        agent_id: impl Fn(&T) -> &String,
    ) -> Result<(agent_runtime::run::AgentCron, T), Status> {
        self.check_main_route(request.metadata(), agent_id(request.get_ref()))
            .await?;
        let privilege = crate::cron_forward::privilege_of(request.metadata());
        let request = request.into_inner();
        let cron = self
            .runtime
            .cron_as(agent_id(&request), privilege)
            .map_err(status_of)?;
        Ok((cron, request))
    }

    /// [`Self::key_of`], then [`Self::check_route`].
    async fn routed_key_of(
        &self,
        metadata: &tonic::metadata::MetadataMap,
        session: Option<pb::SessionRef>,
    ) -> Result<(String, String), Status> {
        let (agent_id, key) = self.key_of(session).await?;
        self.check_route(metadata, &agent_id, &key).await?;
        Ok((agent_id, key))
    }

    /// Hands a message to its session (Run and Send share this).
    #[expect(
        clippy::too_many_arguments,
        reason = "the fields of RunRequest and SendRequest, destructured by both callers"
    )]
    async fn submit(
        &self,
        metadata: &tonic::metadata::MetadataMap,
        session: Option<pb::SessionRef>,
        message: String,
        channel: Option<pb::ChannelContext>,
        model: String,
        max_steps: u32,
        queue_mode: i32,
    ) -> Result<agent_runtime::run::Submitted, Status> {
        let (agent_id, session_key) = self.routed_key_of(metadata, session).await?;
        let channel = convert::channel_of(channel).map_err(status_of)?;
        let queue_mode = convert::queue_mode_of(queue_mode).map_err(status_of)?;
        let spec = agent_runtime::run::RunSpec {
            agent_id,
            session_key,
            message,
            channel,
            model: (!model.trim().is_empty()).then_some(model),
            max_steps,
            queue_mode,
        };
        let submitted = self.runtime.runs().submit(spec).await.map_err(status_of)?;
        service_kit::record_session_id(&submitted.acceptance.session_id);
        Ok(submitted)
    }

    /// Serves `runtime`.
    pub fn new(runtime: Arc<Runtime>) -> Self {
        Self::serving(runtime, ServedWith::default())
    }

    /// Serves `runtime`, started as `served` says.
    pub fn serving(runtime: Arc<Runtime>, served: ServedWith) -> Self {
        Self { runtime, served }
    }

    /// A session for the API, with its working directory.
    fn session(&self, info: agent_runtime::sessions::SessionInfo) -> pb::Session {
        let workspace = self
            .runtime
            .sessions()
            .workspace_path(&info.agent_id, &info.key)
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        self.session_with(info, workspace)
    }

    /// Sessions of one agent (a list page), the agent looked up once for all of them.
    fn sessions(&self, infos: Vec<agent_runtime::sessions::SessionInfo>) -> Vec<pb::Session> {
        let paths = self.workspace_paths(&infos);
        infos
            .into_iter()
            .map(|info| {
                let workspace = match &paths {
                    Some(paths) => paths.of(&info.key).display().to_string(),
                    None => String::new(),
                };
                self.session_with(info, workspace)
            })
            .collect()
    }

    /// The working directories of the agent of `infos` (one agent's sessions).
    fn workspace_paths(
        &self,
        infos: &[agent_runtime::sessions::SessionInfo],
    ) -> Option<agent_runtime::WorkspacePaths> {
        let first = infos.first()?;
        self.runtime
            .sessions()
            .workspace_paths(&first.agent_id)
            .ok()
    }

    /// What a ListSessions request asks for, checked.
    pub(crate) fn list_query(request: pb::ListSessionsRequest) -> Result<ListQuery, Status> {
        let pb::ListSessionsRequest {
            agent_id,
            page_size,
            page_token,
            view,
        } = request;
        let after = page_cursor(&page_token)?;
        let basic = match pb::SessionView::try_from(view) {
            Ok(pb::SessionView::Basic) => true,
            Ok(pb::SessionView::Unspecified | pb::SessionView::Full) => false,
            Err(_) => {
                return Err(Status::invalid_argument(format!(
                    "view {view} is not a SessionView this server knows \
                     (SESSION_VIEW_BASIC = 1, SESSION_VIEW_FULL = 2)"
                )));
            }
        };
        Ok(ListQuery {
            agent_id,
            after,
            limit: usize::try_from(page_size).unwrap_or(usize::MAX),
            basic,
        })
    }

    /// One page of ListSessions: the sessions and the token of the page after it.
    pub(crate) async fn list_page(&self, query: ListQuery) -> Result<ListedPage, Status> {
        let (sessions, more) = self
            .runtime
            .sessions()
            .list_page(
                &query.agent_id,
                query.after.as_ref().map(|(at, key)| (*at, key.as_str())),
                query.limit,
            )
            .await
            .map_err(status_of)?;
        let next_page_token = page_token(
            sessions
                .last()
                .map(|last| (last.entry.updated_at, &last.key)),
            more,
        );
        Ok(ListedPage {
            sessions,
            next_page_token,
            basic: query.basic,
        })
    }

    /// A page as the ListSessions route sends it (`sessions_reply`): written straight from
    /// the index rows, on the blocking pool, copying no session.
    pub(crate) async fn sessions_reply(
        &self,
        query: ListQuery,
    ) -> Result<crate::sessions_reply::SessionsReply, Status> {
        let sessions = self.runtime.sessions();
        // The full view's per-agent lookups, made once for the page.
        let full = (!query.basic).then(|| {
            let paths = sessions.workspace_paths(&query.agent_id).ok();
            let cuts = paths
                .as_ref()
                .map(|paths| sessions.repeated_cuts_by_session(paths.agent_id()))
                .unwrap_or_default();
            (paths, cuts)
        });
        sessions
            .list_page_with(
                &query.agent_id,
                query.after.as_ref().map(|(at, key)| (*at, key.as_str())),
                query.limit,
                move |agent_id, rows, more| {
                    let token = page_token(
                        rows.last().map(|last| (last.entry.updated_at, last.key)),
                        more,
                    );
                    match full {
                        None => crate::sessions_reply::SessionsReply::basic(rows, &token),
                        Some((paths, cuts)) => crate::sessions_reply::SessionsReply::new(
                            agent_id,
                            rows,
                            paths.as_ref(),
                            |key| {
                                cuts.get(key.as_str())
                                    .map(|cuts| cuts.iter().map(convert::cut_to_pb).collect())
                                    .unwrap_or_default()
                            },
                            &token,
                        ),
                    }
                },
            )
            .await
            .map_err(status_of)
    }

    fn session_with(
        &self,
        info: agent_runtime::sessions::SessionInfo,
        workspace: String,
    ) -> pb::Session {
        let cuts = self
            .runtime
            .sessions()
            .repeated_cuts(&info.agent_id, info.key.as_str());
        convert::session_to_pb(info, workspace, &cuts)
    }
}

/// What a `ListSessions` request asks for ([`AgentServiceImpl::list_query`]).
#[derive(Debug)]
pub(crate) struct ListQuery {
    agent_id: String,
    /// The cursor of the page token: the previous page's last `(updated_at, key)`.
    after: Option<(i64, String)>,
    /// Sessions at most (0: all).
    limit: usize,
    /// `SESSION_VIEW_BASIC`: only the fields a list shows.
    basic: bool,
}

/// The token of the page after a page whose last session is `last` (its update time and
/// key), when `more` follow; empty when the page is the last.
fn page_token(last: Option<(i64, &openclaw_transcript::SessionKey)>, more: bool) -> String {
    match last {
        Some((updated_at, key)) if more => format!("{updated_at}:{}", key.as_str()),
        _ => String::new(),
    }
}

/// One page of `ListSessions`, its sessions copied out of the index.
#[derive(Debug)]
pub(crate) struct ListedPage {
    /// The page's sessions, in list order.
    sessions: Vec<agent_runtime::sessions::SessionInfo>,
    /// Empty on the last page.
    next_page_token: String,
    /// `SESSION_VIEW_BASIC`: only the fields a list shows.
    basic: bool,
}

/// The position a `ListSessions` page token names: the `(updated_at, key)` of the previous
/// page's last session (`<updatedAt>:<key>`); empty is the first page.
fn page_cursor(token: &str) -> Result<Option<(i64, String)>, Status> {
    if token.is_empty() {
        return Ok(None);
    }
    token
        .split_once(':')
        .and_then(|(at, key)| Some((at.parse::<i64>().ok()?, key.to_owned())))
        .filter(|(_, key)| !key.is_empty())
        .map(Some)
        .ok_or_else(|| {
            Status::invalid_argument(format!(
                "page_token {token:?} is not a next_page_token ListSessions returned"
            ))
        })
}

type TranscriptStream = Pin<Box<dyn Stream<Item = Result<pb::TranscriptItem, Status>> + Send>>;
type RunEventStream = Pin<Box<dyn Stream<Item = Result<pb::RunEvent, Status>> + Send>>;

#[tonic::async_trait]
impl AgentService for AgentServiceImpl {
    async fn setup(
        &self,
        request: Request<pb::SetupRequest>,
    ) -> Result<Response<pb::SetupResponse>, Status> {
        let pb::SetupRequest {
            agent_id,
            full_reset,
        } = request.into_inner();
        let outcome = self
            .runtime
            .setup(&agent_id, full_reset)
            .await
            .map_err(status_of)?;
        Ok(Response::new(pb::SetupResponse {
            config_created: outcome.config_created,
            config_path: outcome.config_path.display().to_string(),
            workspaces: outcome
                .workspaces
                .into_iter()
                .map(|w| pb::WorkspaceSetup {
                    agent_id: w.agent_id,
                    workspace: w.workspace.display().to_string(),
                    created_files: w.created_files,
                    bootstrap_seeded: w.bootstrap_seeded,
                    skipped_bootstrap: w.skipped_bootstrap,
                })
                .collect(),
        }))
    }

    async fn list_agents(
        &self,
        _request: Request<pb::ListAgentsRequest>,
    ) -> Result<Response<pb::ListAgentsResponse>, Status> {
        let (agents, default_id) = self.runtime.agents().list().map_err(status_of)?;
        let agents = agents
            .into_iter()
            .map(|a| pb::Agent {
                is_default: a.id == default_id,
                name: a.name.clone().unwrap_or_default(),
                workspace: a.workspace.display().to_string(),
                model: a.model.clone().unwrap_or_default(),
                runtime: match a.runtime {
                    AgentRuntime::Embedded => "embedded".to_owned(),
                    AgentRuntime::Codex(_) => "codex".to_owned(),
                },
                id: a.id,
            })
            .collect();
        Ok(Response::new(pb::ListAgentsResponse { agents }))
    }

    async fn create_session(
        &self,
        request: Request<pb::CreateSessionRequest>,
    ) -> Result<Response<pb::CreateSessionResponse>, Status> {
        self.check_route(
            request.metadata(),
            &request.get_ref().agent_id,
            &request.get_ref().session_key,
        )
        .await?;
        let req = request.into_inner();
        let meta = convert::new_session(&req).map_err(status_of)?;
        let (info, created) = self
            .runtime
            .sessions()
            .create(&req.agent_id, &req.session_key, meta)
            .await
            .map_err(status_of)?;
        Ok(Response::new(pb::CreateSessionResponse {
            session: Some(self.session(info)),
            created,
        }))
    }

    async fn list_sessions(
        &self,
        request: Request<pb::ListSessionsRequest>,
    ) -> Result<Response<pb::ListSessionsResponse>, Status> {
        // The server routes ListSessions to `sessions_reply::agent_routes`, which writes the
        // same page without building these messages (its test holds the bytes equal to
        // prost's encoding of them); this answers when the generated server is mounted alone.
        let page = self
            .list_page(Self::list_query(request.into_inner())?)
            .await?;
        let sessions = if page.basic {
            page.sessions
                .iter()
                .map(convert::basic_session_to_pb)
                .collect()
        } else {
            self.sessions(page.sessions)
        };
        Ok(Response::new(pb::ListSessionsResponse {
            sessions,
            next_page_token: page.next_page_token,
        }))
    }

    async fn get_session(
        &self,
        request: Request<pb::GetSessionRequest>,
    ) -> Result<Response<pb::Session>, Status> {
        let (agent, target) = self.routed_target(request, |r| r.session).await?;
        let info = self
            .runtime
            .sessions()
            .get(&agent, &target)
            .await
            .map_err(status_of)?;
        Ok(Response::new(self.session(info)))
    }

    async fn reset_session(
        &self,
        request: Request<pb::ResetSessionRequest>,
    ) -> Result<Response<pb::Session>, Status> {
        let (agent, target) = self.routed_target(request, |r| r.session).await?;
        let info = self
            .runtime
            .sessions()
            .reset(&agent, &target)
            .await
            .map_err(status_of)?;
        Ok(Response::new(self.session(info)))
    }

    async fn delete_session(
        &self,
        request: Request<pb::DeleteSessionRequest>,
    ) -> Result<Response<pb::DeleteSessionResponse>, Status> {
        let (agent, target) = self.routed_target(request, |r| r.session).await?;
        let archived = self
            .runtime
            .sessions()
            .delete(&agent, &target)
            .await
            .map_err(status_of)?;
        Ok(Response::new(pb::DeleteSessionResponse {
            archived_transcript: archived
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
        }))
    }

    type GetTranscriptStream = TranscriptStream;

    async fn get_transcript(
        &self,
        request: Request<pb::GetTranscriptRequest>,
    ) -> Result<Response<Self::GetTranscriptStream>, Status> {
        let (agent, target) = self.routed_target(request, |r| r.session).await?;
        let rx = self
            .runtime
            .sessions()
            .transcript(&agent, &target)
            .await
            .map_err(status_of)?;
        let mut seq = 0u64;
        let stream = ReceiverStream::new(rx).flat_map(move |item| {
            let items = match item.map_err(status_of) {
                Ok(TranscriptItem::Header(header)) => {
                    seq += 1;
                    parts::entry_items(convert::header_to_pb(&header))
                }
                Ok(TranscriptItem::Entry(entry)) => {
                    seq += 1;
                    parts::entry_items(convert::entry_to_pb(seq, &entry))
                }
                Ok(TranscriptItem::Report(report)) => vec![pb::TranscriptItem {
                    item: Some(pb::transcript_item::Item::Report(convert::report_to_pb(
                        &report,
                    ))),
                }],
                Err(status) => return stream::iter(vec![Err(status)]),
            };
            stream::iter(items.into_iter().map(Ok).collect::<Vec<_>>())
        });
        Ok(Response::new(Box::pin(stream)))
    }

    async fn list_skills(
        &self,
        request: Request<pb::ListSkillsRequest>,
    ) -> Result<Response<pb::ListSkillsResponse>, Status> {
        let discovery = self
            .runtime
            .agents()
            .skills(&request.into_inner().agent_id)
            .await
            .map_err(status_of)?;
        Ok(Response::new(convert::skills_to_pb(&discovery)))
    }

    type RunStream = RunEventStream;

    async fn run(
        &self,
        request: Request<pb::RunRequest>,
    ) -> Result<Response<Self::RunStream>, Status> {
        let metadata = request.metadata().clone();
        let pb::RunRequest {
            session,
            message,
            channel,
            model,
            max_steps,
            queue_mode,
        } = request.into_inner();
        let submitted = self
            .submit(
                &metadata, session, message, channel, model, max_steps, queue_mode,
            )
            .await?;
        let first = convert::accepted_event(&submitted.acceptance);
        let mut next = first.seq + 1;
        let follower = submitted.follow();
        let followed = futures_util::stream::unfold(follower, |mut follower| async move {
            let event = follower.recv().await?;
            Some((event, follower))
        });
        let events = followed.flat_map(move |e| {
            let events = parts::run_events(next, e.run, convert::event_to_pb(e.event));
            next += events.len() as u64;
            stream::iter(events.into_iter().map(Ok))
        });
        Ok(Response::new(Box::pin(
            tokio_stream::once(Ok(first)).chain(events),
        )))
    }

    async fn send(
        &self,
        request: Request<pb::SendRequest>,
    ) -> Result<Response<pb::SendResponse>, Status> {
        let metadata = request.metadata().clone();
        let pb::SendRequest {
            session,
            message,
            channel,
            queue_mode,
            model,
            max_steps,
        } = request.into_inner();
        let submitted = self
            .submit(
                &metadata, session, message, channel, model, max_steps, queue_mode,
            )
            .await?;
        Ok(Response::new(pb::SendResponse {
            disposition: Some(convert::disposition_to_pb(&submitted.acceptance)),
        }))
    }

    type WatchSessionStream = RunEventStream;

    async fn watch_session(
        &self,
        request: Request<pb::WatchSessionRequest>,
    ) -> Result<Response<Self::WatchSessionStream>, Status> {
        let metadata = request.metadata().clone();
        let (agent_id, session_key) = self
            .routed_key_of(&metadata, request.into_inner().session)
            .await?;
        let target = agent_runtime::sessions::SessionTarget::Key(session_key);
        let events = self
            .runtime
            .sessions()
            .watch(&agent_id, &target)
            .await
            .map_err(status_of)?;
        let mut next = 1u64;
        let stream = events.into_stream().flat_map(move |item| {
            let (run, event) = match item {
                Ok(e) => {
                    let e = std::sync::Arc::unwrap_or_clone(e);
                    (e.run, e.event)
                }
                Err(missed) => (0, agent_runtime::run::RunEvent::Lagged(missed)),
            };
            let events = parts::run_events(next, run, convert::event_to_pb(event));
            next += events.len() as u64;
            stream::iter(events.into_iter().map(Ok))
        });
        // A watch is idle most of its life: it ends as soon as the server starts to stop,
        // so it never holds the drain, and says why.
        let Some(mut stopping) = self.served.stopping.clone() else {
            return Ok(Response::new(Box::pin(stream)));
        };
        let stopped = async move {
            let _ = stopping.wait_for(|stop| *stop).await;
        };
        let stream = stream
            .take_until(stopped)
            .chain(stream::once(async { Err(stopping_status()) }));
        Ok(Response::new(Box::pin(stream)))
    }

    async fn preview_prompt(
        &self,
        request: Request<pb::PreviewPromptRequest>,
    ) -> Result<Response<pb::PreviewPromptResponse>, Status> {
        let metadata = request.metadata().clone();
        let pb::PreviewPromptRequest { session, channel } = request.into_inner();
        let (agent_id, session_key) = self.routed_key_of(&metadata, session).await?;
        let channel = convert::channel_of(channel).map_err(status_of)?;
        let preview = self
            .runtime
            .runs()
            .preview(&agent_id, &session_key, &channel)
            .await
            .map_err(status_of)?;
        Ok(Response::new(pb::PreviewPromptResponse {
            prompt: Some(preview.prompt),
            model: preview.model,
            tools: preview.tools,
        }))
    }

    async fn context_report(
        &self,
        request: Request<pb::ContextReportRequest>,
    ) -> Result<Response<pb::ContextReportResponse>, Status> {
        let metadata = request.metadata().clone();
        let pb::ContextReportRequest { session, detail } = request.into_inner();
        let (agent_id, session_key) = self.routed_key_of(&metadata, session).await?;
        let preview = self
            .runtime
            .runs()
            .preview(
                &agent_id,
                &session_key,
                &agent_runtime::prompt_input::TurnChannel::default(),
            )
            .await
            .map_err(status_of)?;
        let text = agent_runtime::report::context_text(
            &preview.workspace.display().to_string(),
            &preview.prompt,
            detail,
        );
        Ok(Response::new(pb::ContextReportResponse {
            prompt: Some(preview.prompt),
            text,
        }))
    }

    async fn list_cron_jobs(
        &self,
        request: Request<pb::ListCronJobsRequest>,
    ) -> Result<Response<pb::ListCronJobsResponse>, Status> {
        let (cron, _) = self.cron_of(request, |r| &r.agent_id).await?;
        let jobs = cron.list().map_err(status_of)?;
        Ok(Response::new(pb::ListCronJobsResponse {
            jobs: jobs.into_iter().map(crate::cron_api::job).collect(),
        }))
    }

    async fn add_cron_job(
        &self,
        request: Request<pb::AddCronJobRequest>,
    ) -> Result<Response<pb::CronJob>, Status> {
        let (cron, request) = self.cron_of(request, |r| &r.agent_id).await?;
        let spec = crate::cron_api::spec_of(request.spec)?;
        let job = cron.add(spec).map_err(status_of)?;
        tracing::info!(agent = %job.agent_id, job = %job.id, name = %job.spec.name, "cron job added");
        Ok(Response::new(crate::cron_api::job(job)))
    }

    async fn update_cron_job(
        &self,
        request: Request<pb::UpdateCronJobRequest>,
    ) -> Result<Response<pb::CronJob>, Status> {
        let (cron, request) = self.cron_of(request, |r| &r.agent_id).await?;
        let patch = crate::cron_api::patch_of(request.patch)?;
        let job = cron.update(request.id.trim(), patch).map_err(status_of)?;
        Ok(Response::new(crate::cron_api::job(job)))
    }

    async fn remove_cron_job(
        &self,
        request: Request<pb::RemoveCronJobRequest>,
    ) -> Result<Response<pb::CronJob>, Status> {
        let (cron, request) = self.cron_of(request, |r| &r.agent_id).await?;
        let job = cron.remove(request.id.trim()).map_err(status_of)?;
        tracing::info!(agent = %job.agent_id, job = %job.id, "cron job removed");
        Ok(Response::new(crate::cron_api::job(job)))
    }

    async fn run_cron_job(
        &self,
        request: Request<pb::RunCronJobRequest>,
    ) -> Result<Response<pb::RunCronJobResponse>, Status> {
        let (cron, request) = self.cron_of(request, |r| &r.agent_id).await?;
        if request.queue_only {
            let queued = cron.queue_now(request.id.trim()).await.map_err(status_of)?;
            return Ok(Response::new(match queued {
                Ok(session_key) => pb::RunCronJobResponse {
                    status: pb::CronRunStatus::Unspecified as i32,
                    error: String::new(),
                    session_key,
                },
                Err(outcome) => crate::cron_api::outcome(outcome),
            }));
        }
        let outcome = cron.run_now(request.id.trim()).await.map_err(status_of)?;
        Ok(Response::new(crate::cron_api::outcome(outcome)))
    }

    async fn resolve_approval(
        &self,
        request: Request<pb::ResolveApprovalRequest>,
    ) -> Result<Response<pb::Approval>, Status> {
        let metadata = request.metadata().clone();
        let pb::ResolveApprovalRequest {
            session,
            id,
            decision,
            decided_by,
        } = request.into_inner();
        let decision = crate::approvals_api::decision_of(decision)?;
        let (agent, target) = convert::target_of(session);
        self.check_target_route(&metadata, &agent, &target).await?;
        let approval = self
            .runtime
            .approvals()
            .resolve(&agent, &id, decision, &decided_by)
            .await
            .map_err(status_of)?;
        Ok(Response::new(crate::approvals_api::approval_pb(approval)))
    }

    async fn list_approvals(
        &self,
        request: Request<pb::ListApprovalsRequest>,
    ) -> Result<Response<pb::ListApprovalsResponse>, Status> {
        let metadata = request.metadata().clone();
        let pb::ListApprovalsRequest {
            agent_id,
            session_key,
            include_decided,
        } = request.into_inner();
        if !session_key.trim().is_empty() {
            self.check_route(&metadata, &agent_id, &session_key).await?;
        }
        let approvals = self
            .runtime
            .approvals()
            .list(&agent_id, &session_key, include_decided)
            .map_err(status_of)?;
        Ok(Response::new(pb::ListApprovalsResponse {
            approvals: approvals
                .into_iter()
                .map(crate::approvals_api::approval_pb)
                .collect(),
        }))
    }

    async fn list_exec_allowlist(
        &self,
        request: Request<pb::ListExecAllowlistRequest>,
    ) -> Result<Response<pb::ListExecAllowlistResponse>, Status> {
        self.check_main_route(request.metadata(), &request.get_ref().agent_id)
            .await?;
        let pb::ListExecAllowlistRequest { agent_id } = request.into_inner();
        let list = self
            .runtime
            .approvals()
            .allowlist(&agent_id)
            .map_err(status_of)?;
        Ok(Response::new(crate::approvals_api::allowlist_pb(list)))
    }

    async fn add_exec_allowlist_entry(
        &self,
        request: Request<pb::AddExecAllowlistEntryRequest>,
    ) -> Result<Response<pb::ListExecAllowlistResponse>, Status> {
        self.check_main_route(request.metadata(), &request.get_ref().agent_id)
            .await?;
        let pb::AddExecAllowlistEntryRequest {
            agent_id,
            pattern,
            added_by,
        } = request.into_inner();
        let list = self
            .runtime
            .approvals()
            .add_allowlist_entry(&agent_id, &pattern, &added_by)
            .await
            .map_err(status_of)?;
        Ok(Response::new(crate::approvals_api::allowlist_pb(list)))
    }

    async fn remove_exec_allowlist_entry(
        &self,
        request: Request<pb::RemoveExecAllowlistEntryRequest>,
    ) -> Result<Response<pb::ListExecAllowlistResponse>, Status> {
        self.check_main_route(request.metadata(), &request.get_ref().agent_id)
            .await?;
        let pb::RemoveExecAllowlistEntryRequest { agent_id, pattern } = request.into_inner();
        let list = self
            .runtime
            .approvals()
            .remove_allowlist_entry(&agent_id, &pattern)
            .await
            .map_err(status_of)?;
        Ok(Response::new(crate::approvals_api::allowlist_pb(list)))
    }

    async fn get_service_status(
        &self,
        _request: Request<pb::GetServiceStatusRequest>,
    ) -> Result<Response<pb::ServiceStatus>, Status> {
        let config_error = match self.runtime.config().ready() {
            Ok(_) => String::new(),
            Err(error) => error.to_string(),
        };
        let prompt_reachable = self
            .served
            .prompt_reachability
            .as_ref()
            .is_none_or(|rx| *rx.borrow());
        let ready = match &self.served.serving {
            Some(serving) => *serving.borrow(),
            None => config_error.is_empty() && prompt_reachable,
        };
        let (default_agent, default_model) = match self.runtime.agents().list() {
            Ok((agents, default_id)) => {
                let model = agents
                    .iter()
                    .find(|a| a.id == default_id)
                    .and_then(|a| a.model.clone())
                    .unwrap_or_default();
                (default_id, model)
            }
            Err(_) => (String::new(), String::new()),
        };
        let repairs = self
            .runtime
            .sessions()
            .manager()
            .repairs()
            .into_iter()
            .map(crate::convert::state_repair)
            .collect();
        Ok(Response::new(pb::ServiceStatus {
            version: env!("CARGO_PKG_VERSION").to_owned(),
            ready,
            prompt_service_reachable: prompt_reachable,
            started_at_ms: self.served.started_at_ms,
            repairs,
            config_error,
            prompt_service_remote: self.served.prompt_reachability.is_some(),
            tls: self.served.tls,
            client_certificates: self.served.client_certificates,
            bearer_tokens: self.served.bearer_tokens,
            default_agent,
            default_model,
            config_path: self.runtime.settings().config_path.display().to_string(),
        }))
    }
}
