mod binary;
mod chat;
mod cron;
mod demo_binary;
mod demo_config;
mod harness;
mod inspect;
mod stack;
