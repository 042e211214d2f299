mod compose;
mod compose_run;
mod design_ids;
mod features;
mod k8s;
mod proto;
mod router;
mod support;
