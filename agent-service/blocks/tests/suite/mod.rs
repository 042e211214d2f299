//! Test modules: unit tests per component, property tests, shared support.

mod chunker;
mod coalesce;
mod directives;
mod props;
mod settings;
mod support;
mod tracker;
