//! Test modules: scenarios shared by the three wire formats (retry included), request shapes
//! per format, the registry and the scripted model.

mod anthropic;
mod chat_completions;
mod fake_server;
mod openai_responses;
mod registry;
mod scripted;
mod support;
mod wire;
