mod crash;
mod fixture;
mod format;
mod index;
mod paths;
mod reader;
mod store;
mod writer;
