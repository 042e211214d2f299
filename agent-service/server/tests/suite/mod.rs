mod harness;
mod runs;
mod sessions;
mod workspaces;
