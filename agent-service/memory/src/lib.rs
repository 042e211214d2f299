//! `openclaw-memory`: the per-agent index that `memory_search` answers from.
//!
//! What it is for:
//! - finding the memory files of a workspace (`MEMORY.md` and `memory/**.md`, read only
//!   through the workspace's confinement: [`files`]) and cutting them into chunks of about
//!   400 tokens that overlap by 80, each with its first and last line ([`chunk`]);
//! - keeping them in one SQLite database per agent under the state dir ([`store`]), with two
//!   FTS5 tables: `porter unicode61` for words of spaced scripts (`runs` and `running` find
//!   "run") and `trigram` for scripts written without spaces (Chinese, Japanese, Korean), where
//!   one- and two-character queries fall back to a substring scan of the same chunks;
//! - updating it on use: each search compares every file's size and mtime with the index,
//!   re-reads only the files that changed and re-chunks only those whose content hash changed;
//!   a change of chunking, embedding provider, model or workspace rebuilds it; a corrupt
//!   database is moved aside and rebuilt, so the index never fails a search;
//! - embeddings from the configured provider over its own wire format ([`embed`]: OpenAI's
//!   `POST /embeddings` as OpenAI, Voyage, Mistral and Ollama serve it, and Gemini's
//!   `batchEmbedContents`), batched and cached by content hash, and hybrid ranking
//!   ([`search`]): `vectorWeight × cosine + textWeight × keyword score ÷ best keyword score`.
//!
//! Vectors are stored as little-endian `f32` BLOBs and compared in process by cosine
//! similarity (sqlite-vec would need an `unsafe` registration call, which this workspace
//! forbids); the vectors of an index are kept in memory between searches.
//!
//! What it is not for: deciding who may search (the runtime offers the memory tools only where
//! MEMORY.md may be read), formatting tool results (the tools crate), or reading any file
//! that is not a memory file.

pub mod chunk;
pub mod embed;
mod engine;
mod error;
pub mod files;
pub mod search;
mod settings;
pub mod store;

pub use engine::{AgentMemory, Hit, Mode, SearchOutcome};
pub use error::MemoryError;
pub use files::is_memory_path;
pub use settings::{Chunking, EmbeddingProvider, EmbeddingSpec, Hybrid, MemorySettings};
