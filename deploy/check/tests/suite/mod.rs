mod compose;
mod compose_run;
mod k8s;
mod proto;
mod router;
mod support;
