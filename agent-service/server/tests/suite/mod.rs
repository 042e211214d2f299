mod harness;
mod sessions;
