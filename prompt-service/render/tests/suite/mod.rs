mod behaviour;
mod properties;
mod snapshots;
mod topics;
