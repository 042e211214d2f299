//! Starts prompt-service on 127.0.0.1:0 in-process and hands out clients.

use std::time::Duration;

use openclaw_proto::prompt::v1::prompt_service_client::PromptServiceClient;
use prompt_server::ServeConfig;
use tokio::{net::TcpListener, sync::oneshot, task::JoinHandle};
use tonic::transport::Channel;

pub struct Server {
    pub endpoint: String,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<Result<(), prompt_server::ServeError>>>,
}

impl Server {
    pub async fn start() -> Self {
        Self::start_with(ServeConfig::default()).await
    }

    pub async fn start_with(config: ServeConfig) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let endpoint = format!("http://{}", listener.local_addr().expect("addr"));
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(prompt_server::serve(listener, config, async {
            let _ = stopped.await;
        }));
        Self {
            endpoint,
            stop: Some(stop),
            task: Some(task),
        }
    }

    pub async fn channel(&self) -> Channel {
        // The listener is bound before serve() starts, so connecting cannot
        // race the server: the connection waits in the accept queue.
        Channel::from_shared(self.endpoint.clone())
            .expect("endpoint")
            .connect_timeout(Duration::from_secs(5))
            .connect()
            .await
            .expect("connect")
    }

    pub async fn client(&self) -> PromptServiceClient<Channel> {
        PromptServiceClient::new(self.channel().await).max_encoding_message_size(64 * 1024 * 1024)
    }

    /// Sends the shutdown signal and waits for serve() to return.
    pub async fn stop(mut self) -> Result<(), prompt_server::ServeError> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        match self.task.take() {
            Some(task) => task.await.expect("serve task panicked"),
            None => Ok(()),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}
