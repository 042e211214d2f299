mod logging;
mod metrics;
