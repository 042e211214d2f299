mod fuzz;
mod load;
mod model_ref;
mod properties;
mod resolve;
mod schema;
mod secrets;
mod support;
