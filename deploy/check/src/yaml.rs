//! YAML documents as typed values or as JSON trees.

use std::path::Path;

use serde::{Deserialize, de::DeserializeOwned};

use crate::Error;

/// The single document of `text` as `T`.
pub(crate) fn one<T: DeserializeOwned>(path: &Path, text: &str) -> Result<T, Error> {
    serde_norway::from_str(text).map_err(|e| Error::Parse {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

/// Every non-empty document of `text` (`---`-separated) as a JSON tree.
pub(crate) fn all(path: &Path, text: &str) -> Result<Vec<serde_json::Value>, Error> {
    let mut documents = Vec::new();
    for document in serde_norway::Deserializer::from_str(text) {
        let value = serde_json::Value::deserialize(document).map_err(|e| Error::Parse {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        if !value.is_null() {
            documents.push(value);
        }
    }
    Ok(documents)
}
