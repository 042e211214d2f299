mod compose;
mod compose_run;
mod k8s;
mod router;
mod support;
