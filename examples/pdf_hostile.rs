//! Hostile PDFs, written to a directory for the bench that
//! measures them (`benches/pdf_hostile.sh`); the same generators as the tests
//! (`tests/it/support/hostile_pdfs.rs`).
//!
//! ```text
//! cargo run --release --example pdf_hostile -- DIR           # writes DIR/<name>.pdf, prints the names
//! cargo run --release --example pdf_hostile -- DIR --small   # the same, a thousand times smaller (fuzz seeds)
//! ```

#[path = "../tests/it/support/hostile_pdfs.rs"]
mod hostile_pdfs;

fn main() {
    let Some(dir) = std::env::args().nth(1) else {
        eprintln!("usage: pdf_hostile DIR");
        std::process::exit(1);
    };
    let inputs = if std::env::args().nth(2).as_deref() == Some("--small") {
        hostile_pdfs::small()
    } else {
        hostile_pdfs::all()
    };
    let dir = std::path::PathBuf::from(dir);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for (name, bytes) in inputs {
        let path = dir.join(format!("{name}.pdf"));
        std::fs::write(&path, &bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        println!("{name}\t{}", bytes.len());
    }
}
