//! Ctrl-C and SIGTERM for the client commands: which one arrived, and the exit code and
//! line each ends a command with (130 and 143, as a shell reports a process the signal
//! ended).

use tokio::signal::unix::{Signal, SignalKind, signal};

/// The signals a client command ends on, listened for from [`Interrupt::listen`] on.
#[derive(Debug)]
pub struct Interrupt {
    interrupt: Signal,
    terminate: Signal,
}

/// Which signal ended a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signalled {
    /// SIGINT: Ctrl-C at a terminal.
    Interrupt,
    /// SIGTERM: a process manager or `kill`.
    Terminate,
}

impl Interrupt {
    /// Starts listening (from now on the signals no longer end the process by themselves).
    /// Needs a tokio runtime.
    pub fn listen() -> std::io::Result<Self> {
        Ok(Self {
            interrupt: signal(SignalKind::interrupt())?,
            terminate: signal(SignalKind::terminate())?,
        })
    }

    /// Waits for the first of the two signals.
    pub async fn wait(mut self) -> Signalled {
        tokio::select! {
            _ = self.interrupt.recv() => Signalled::Interrupt,
            _ = self.terminate.recv() => Signalled::Terminate,
        }
    }
}

impl Signalled {
    /// 128 + the signal's number, as a shell reports it.
    pub fn exit_code(self) -> u8 {
        match self {
            Self::Interrupt => 130,
            Self::Terminate => 143,
        }
    }

    /// The line printed on stderr.
    pub fn message(self) -> &'static str {
        match self {
            Self::Interrupt => "interrupted",
            Self::Terminate => "terminated",
        }
    }
}
