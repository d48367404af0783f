//! A PDF's text layer as the `web_fetch` tool reads it, for the PDF
//! quality bench (`benches/pdf_quality.sh`) and for looking at one file.
//!
//! ```text
//! cargo run --release --example pdf_text -- FILE.pdf          # the Markdown on stdout
//! cargo run --release --example pdf_text -- --time FILE...    # seconds per PDF (in-process) on stderr
//! cargo run --release --example pdf_text -- --time --worker target/release/webfetch FILE...
//! ```
//!
//! No chunking and no JSON: the Markdown of `content::pdf::read` with the default
//! page cap, so a scorer sees exactly what the tool reads. `--worker PROGRAM`
//! reads each PDF in a worker process of `PROGRAM` (`PROGRAM pdf-worker`, as the
//! front doors do) instead of in this one.

use std::time::Instant;

use webfetch::internals::content::pdf::{Limits, read};
use webfetch::{ContentSettings, PdfWorker};

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let time = args.first().is_some_and(|a| a == "--time");
    if time {
        args.remove(0);
    }
    let worker = match args.first().map(String::as_str) {
        Some("--worker") if args.len() > 1 => {
            let program = args.remove(1);
            args.remove(0);
            Some(PdfWorker::new(program))
        }
        _ => None,
    };
    let limits = Limits {
        max_pages: ContentSettings::default().max_pdf_pages,
    };
    let started = Instant::now();
    for path in &args {
        let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let result = match &worker {
            Some(worker) => worker.read(&bytes, &limits),
            None => read(&bytes, &limits),
        };
        match result {
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
