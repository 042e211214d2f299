mod behaviour;
mod promises;
mod properties;
mod snapshots;
mod topics;
mod truth;
