mod harness;
mod sessions;
mod workspaces;
