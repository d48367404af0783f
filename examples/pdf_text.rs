//! A PDF's text layer as the `web_fetch` tool reads it (issue 31), for the PDF
//! quality bench (`benches/pdf_quality.sh`) and for looking at one file.
//!
//! ```text
//! cargo run --release --example pdf_text -- FILE.pdf          # the Markdown on stdout
//! cargo run --release --example pdf_text -- --time FILE...    # seconds per PDF (in-process) on stderr
//! ```
//!
//! No chunking and no JSON: the Markdown of `content::pdf::read` with the default
//! page cap, so a scorer sees exactly what the tool reads.

use std::time::Instant;

use webfetch::ContentSettings;
use webfetch::internals::content::pdf::{Limits, read};

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let time = args.first().is_some_and(|a| a == "--time");
    if time {
        args.remove(0);
    }
    let limits = Limits {
        max_pages: ContentSettings::default().max_pdf_pages,
    };
    let started = Instant::now();
    for path in &args {
        let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        match read(&bytes, &limits) {
            Ok(read) if !time => print!("{}", read.document.markdown),
            Ok(_) => {}
            Err(error) => eprintln!("{path}: {}", error.to_json()),
        }
    }
    if time && !args.is_empty() {
        let per = started.elapsed().as_secs_f64() / args.len() as f64;
        eprintln!("{} PDFs, {per:.4} s/PDF", args.len());
    }
}
