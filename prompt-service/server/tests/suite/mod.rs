mod codex_rpc;
mod config_rpcs;
mod harness;
mod render_rpc;
