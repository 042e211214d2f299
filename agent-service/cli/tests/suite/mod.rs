mod binary;
mod chat;
mod demo_config;
mod harness;
mod inspect;
mod stack;
