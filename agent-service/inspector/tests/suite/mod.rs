mod api;
mod browser;
mod harness;
