mod harness;
mod queue;
mod runs;
mod sessions;
mod workspaces;
