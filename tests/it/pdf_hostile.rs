//! Hostile PDFs through the PDF reader: a stream whose declared length
//! is absurd, nesting 100,000 deep, a decompression bomb (twice the 64 MiB
//! stream cap, in 130 KiB), a page tree that contains itself, and a form XObject that
//! draws itself. Each gives Markdown or an `extraction_failed` with a `pdf_*`
//! reason: never a panic, a hang or memory growing with the declared sizes.

use std::io::Write as _;

use webfetch::ErrorCode;
use webfetch::internals::content::pdf::{Limits, read};

const FONT: &str = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>";
const TEXT: &str = "BT /F1 12 Tf 72 720 Td (Hello hostile world) Tj ET";

/// A PDF of `objects` (object `i + 1` is `objects[i]`) with a correct xref
/// table; object 1 is the catalog.
fn assemble(objects: &[Vec<u8>]) -> Vec<u8> {
    let mut out = b"%PDF-1.7\n".to_vec();
    let mut offsets = Vec::new();
    for (i, object) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n", i + 1).as_bytes());
        out.extend_from_slice(object);
        out.extend_from_slice(b"\nendobj\n");
    }
    let xref = out.len();
    out.extend_from_slice(
        format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes(),
    );
    for offset in offsets {
        out.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    out
}

fn stream(dict: &str, data: &[u8]) -> Vec<u8> {
    let mut out = format!("<< {dict} >>\nstream\n").into_bytes();
    out.extend_from_slice(data);
    out.extend_from_slice(b"\nendstream");
    out
}

fn plain_stream(data: &[u8]) -> Vec<u8> {
    stream(&format!("/Length {}", data.len()), data)
}

/// Catalog, a one-page tree, the page (contents in object 5), the font.
fn one_page(catalog_extra: &str, pages_extra: &str, contents: Vec<u8>) -> Vec<u8> {
    assemble(&[
        format!("<< /Type /Catalog /Pages 2 0 R {catalog_extra} >>").into_bytes(),
        format!("<< /Type /Pages /Kids [3 0 R] /Count 1 {pages_extra} >>").into_bytes(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] \
          /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>"
            .to_vec(),
        FONT.as_bytes().to_vec(),
        contents,
    ])
}

/// Reads `bytes`: Markdown, or a PDF error with a `pdf_*` reason.
fn read_bounded(name: &str, bytes: &[u8]) -> Option<String> {
    let limits = Limits { max_pages: 20 };
    match read(bytes, &limits) {
        Ok(read) => Some(read.document.markdown),
        Err(error) => {
            assert_eq!(
                error.code(),
                ErrorCode::ExtractionFailed,
                "{name}: {error:?}"
            );
            let reason = error.details_json()["reason"].clone();
            assert!(
                reason.as_str().is_some_and(|r| r.starts_with("pdf_")),
                "{name}: {reason}"
            );
            None
        }
    }
}

#[test]
fn a_stream_declaring_a_terabyte_is_read_for_what_it_holds() {
    let bytes = one_page("", "", stream("/Length 999999999999", TEXT.as_bytes()));
    if let Some(markdown) = read_bounded("huge length", &bytes) {
        assert!(markdown.contains("Hello hostile world"), "{markdown}");
    }
}

#[test]
fn deep_nesting_is_refused_or_read_never_a_stack_overflow() {
    let depth = 100_000;
    let arrays = format!("/Deep {}{}", "[".repeat(depth), "]".repeat(depth));
    read_bounded(
        "deep arrays",
        &one_page(&arrays, "", plain_stream(TEXT.as_bytes())),
    );
    let dicts = format!("/X {}1{}", "<< /A ".repeat(depth), " >>".repeat(depth));
    read_bounded(
        "deep dictionaries",
        &one_page("", &dicts, plain_stream(TEXT.as_bytes())),
    );
    let operands = format!(
        "BT /F1 12 Tf 72 720 Td {}(x){} TJ ET {TEXT}",
        "[".repeat(depth),
        "]".repeat(depth)
    );
    read_bounded(
        "deep operands",
        &one_page("", "", plain_stream(operands.as_bytes())),
    );
}

#[test]
fn a_decompression_bomb_stops_at_the_stream_cap() {
    let line = format!("BT /F1 12 Tf 72 720 Td ({}) Tj ET\n", "A".repeat(65_000));
    let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    for _ in 0..2_100 {
        encoder.write_all(line.as_bytes()).unwrap();
    }
    let compressed = encoder.finish().unwrap();
    let contents = stream(
        &format!("/Length {} /Filter /FlateDecode", compressed.len()),
        &compressed,
    );
    read_bounded("flate bomb", &one_page("", "", contents));
}

#[test]
fn a_page_tree_containing_itself_and_a_form_drawing_itself_end() {
    let cyclic = assemble(&[
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [2 0 R 3 0 R 2 0 R] /Count 2147483647 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] \
          /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>"
            .to_vec(),
        FONT.as_bytes().to_vec(),
        plain_stream(TEXT.as_bytes()),
    ]);
    read_bounded("cyclic page tree", &cyclic);

    let form = format!("/X0 Do {TEXT}");
    let resources = "/Resources << /Font << /F1 4 0 R >> /XObject << /X0 6 0 R >> >>";
    let recursive = assemble(&[
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        format!(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] {resources} /Contents 5 0 R >>"
        )
        .into_bytes(),
        FONT.as_bytes().to_vec(),
        plain_stream(form.as_bytes()),
        stream(
            &format!(
                "/Type /XObject /Subtype /Form /BBox [0 0 612 792] {resources} /Length {}",
                form.len()
            ),
            form.as_bytes(),
        ),
    ]);
    let markdown = read_bounded("self-drawing form", &recursive).expect("the page's own text");
    assert!(markdown.contains("Hello hostile world"), "{markdown}");
}
