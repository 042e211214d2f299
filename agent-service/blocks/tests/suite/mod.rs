//! Test modules: unit tests per component, property tests, shared support.

mod chunker;
mod coalesce;
mod props;
mod settings;
mod support;
mod tracker;
