mod schema;
mod snapshot_tool;
