mod codex_rpc;
mod config_rpcs;
mod fuzz;
mod harness;
mod otlp;
mod render_rpc;
mod security;
mod topics_rpc;
