//! The article-extraction corpus's pages, for the extraction, quality and token
//! benches and `examples/extract_stages.rs`.

use std::io::Read as _;
use std::path::{Path, PathBuf};

/// The corpus directory: `WEBFETCH_CORPUS_DIR`, else `../shared/corpus/article-extraction`.
pub(crate) fn corpus_dir() -> PathBuf {
    std::env::var_os("WEBFETCH_CORPUS_DIR").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/article-extraction"),
        PathBuf::from,
    )
}

/// The corpus pages (`html/*.html.gz`, decompressed), sorted by file name, with
/// their paths; empty (with a message on stderr) when the corpus is not there.
pub(crate) fn corpus() -> Vec<(PathBuf, Vec<u8>)> {
    let dir = corpus_dir().join("html");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!("corpus not found at {}: corpus runs skipped", dir.display());
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| Some(e.ok()?.path())).collect();
    paths.sort();
    paths
        .into_iter()
        .filter_map(|path| {
            let bytes = gunzip(&path)?;
            Some((path, bytes))
        })
        .collect()
}

fn gunzip(path: &Path) -> Option<Vec<u8>> {
    let mut bytes = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).ok()?)
        .read_to_end(&mut bytes)
        .ok()?;
    Some(bytes)
}
