//! Compiles the .proto files with protox (pure Rust), so building never needs a
//! system `protoc`. Also writes the encoded descriptor set used for server
//! reflection and for JSON <-> protobuf conversion in the CLIs.

use std::{env, fs, path::PathBuf};

const PROTOS: &[&str] = &[
    "openclaw/prompt/v1/prompt.proto",
    "openclaw/agent/v1/agent.proto",
    "openclaw/bench/v1/echo.proto",
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = PathBuf::from(env::var("CARGO_MANIFEST_DIR")?);
    let files: Vec<PathBuf> = PROTOS.iter().map(|p| root.join(p)).collect();
    let fds = protox::compile(&files, [&root])?;
    let out = PathBuf::from(env::var("OUT_DIR")?);
    fs::write(
        out.join("openclaw_descriptor.bin"),
        prost::Message::encode_to_vec(&fds),
    )?;
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .compile_fds(fds)?;
    for file in &files {
        println!("cargo:rerun-if-changed={}", file.display());
    }
    Ok(())
}
