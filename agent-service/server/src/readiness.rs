//! The health status of `openclaw.agent.v1.AgentService`: readiness.
//!
//! SERVING while three things hold: the config is valid, prompt-service is
//! reachable (when prompts come from one) and shutdown has not begun. The
//! whole server's status (the empty service name, liveness) stays SERVING
//! throughout, so an orchestrator takes traffic away from an instance that
//! cannot answer without restarting it.
//!
//! One task owns the status: every change goes through it, so a late
//! "reachable again" can never overwrite the NOT_SERVING of shutdown.

use openclaw_proto::agent::v1::agent_service_server::AgentServiceServer;
use tokio::{sync::watch, task::JoinHandle};
use tonic_health::server::HealthReporter;

use crate::service::AgentServiceImpl;

/// What readiness is decided from.
#[derive(Debug)]
pub(crate) struct Inputs {
    /// The config loaded and resolved.
    pub(crate) config_ready: bool,
    /// prompt-service's reachability; None when prompts render in this
    /// process.
    pub(crate) prompt: Option<watch::Receiver<bool>>,
}

/// The running readiness task.
#[derive(Debug)]
pub(crate) struct Readiness {
    stopping: watch::Sender<bool>,
    serving: watch::Receiver<bool>,
    task: JoinHandle<()>,
}

impl Readiness {
    /// Publishes the status now and follows its inputs from here on.
    pub(crate) async fn start(reporter: HealthReporter, inputs: Inputs) -> Self {
        let (stopping, stop) = watch::channel(false);
        let serving = decide(&inputs, false);
        publish(&reporter, serving).await;
        let (serving_tx, serving_rx) = watch::channel(serving);
        let task = tokio::spawn(follow(reporter, inputs, stop, serving_tx));
        Self {
            stopping,
            serving: serving_rx,
            task,
        }
    }

    /// The status as published, following every change.
    pub(crate) fn serving(&self) -> watch::Receiver<bool> {
        self.serving.clone()
    }

    /// Shutdown began: NOT_SERVING, for good, once this returns.
    pub(crate) async fn stop(self) {
        self.stopping.send_replace(true);
        let _ = self.task.await;
    }
}

fn decide(inputs: &Inputs, stopping: bool) -> bool {
    inputs.config_ready && !stopping && inputs.prompt.as_ref().is_none_or(|rx| *rx.borrow())
}

async fn publish(reporter: &HealthReporter, serving: bool) {
    if serving {
        reporter
            .set_serving::<AgentServiceServer<AgentServiceImpl>>()
            .await;
    } else {
        reporter
            .set_not_serving::<AgentServiceServer<AgentServiceImpl>>()
            .await;
    }
}

async fn follow(
    reporter: HealthReporter,
    mut inputs: Inputs,
    mut stop: watch::Receiver<bool>,
    published: watch::Sender<bool>,
) {
    let mut serving = *published.borrow();
    // The reachability watch ends only with the runtime; its last value
    // then stays in the receiver.
    let mut prompt_open = inputs.prompt.is_some();
    loop {
        let prompt_changed = async {
            match inputs.prompt.as_mut().filter(|_| prompt_open) {
                Some(rx) => rx.changed().await.is_ok(),
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            _ = stop.changed() => {
                publish(&reporter, false).await;
                published.send_replace(false);
                return;
            }
            open = prompt_changed => prompt_open = open,
        }
        let now = decide(&inputs, false);
        if now != serving {
            serving = now;
            let prompt = inputs.prompt.as_ref().map(|rx| *rx.borrow());
            tracing::info!(serving, prompt_reachable = ?prompt, "readiness changed");
            publish(&reporter, serving).await;
            published.send_replace(serving);
        }
    }
}
