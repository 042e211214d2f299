//! Test modules: scenarios shared by the three wire formats (retry included), request shapes
//! per format, the registry and the scripted model, and real model and server behaviour
//! against a byte-exact scripted server.

mod anthropic;
mod chat_completions;
mod fake_server;
mod model_behaviour;
mod openai_responses;
mod raw_server;
mod registry;
mod scripted;
mod support;
mod wire;
