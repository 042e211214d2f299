mod behaviour;
mod properties;
mod snapshots;
