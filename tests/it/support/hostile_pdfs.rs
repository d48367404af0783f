//! Hostile PDFs, generated: each makes a reader that trusts its input spend far
//! more than the file's size. Used by `tests/it/pdf_limits.rs` and,
//! through `#[path]`, by `examples/pdf_hostile.rs` (the bench that measures them).
//!
//! Every file is a readable one-page document ("Hello hostile world") plus the
//! hostile part, so a reader that resists the attack may still answer.

use std::io::Write as _;

/// The text of every file's page.
pub(crate) const TEXT: &str = "BT /F1 12 Tf 72 720 Td (Hello hostile world) Tj ET";
const FONT: &str = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>";

/// Each hostile input by name, as the bench's table lists them.
pub(crate) fn all() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        (
            "objstm_same_offset_64",
            object_stream_same_offset(64, 4_000_000),
        ),
        (
            "objstm_same_offset_4",
            object_stream_same_offset(4, 4_000_000),
        ),
        (
            "objstm_same_offset_64_encrypted",
            object_stream_same_offset_encrypted(64, 4_000_000),
        ),
        (
            "objstm_via_length_reference",
            object_stream_via_length(64, 4_000_000),
        ),
        ("raw_array_30mb", raw_array(30_000_000)),
        ("form_64mib_painted_300", form_painted(300, 64 << 20)),
        ("form_64mib_painted_2000", form_painted(2000, 64 << 20)),
        ("inline_font_200_tf", inline_font(200)),
        ("nested_forms_8", nested_forms(8, 64 << 20)),
    ]
}

/// The same attacks a thousand times smaller: seeds for the `pdf` fuzz target,
/// which reach the same code at a fuzzer's speed.
pub(crate) fn small() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("objstm_same_offset", object_stream_same_offset(8, 4_000)),
        (
            "objstm_same_offset_encrypted",
            object_stream_same_offset_encrypted(8, 4_000),
        ),
        (
            "objstm_via_length_reference",
            object_stream_via_length(8, 4_000),
        ),
        ("raw_array", raw_array(30_000)),
        ("form_painted", form_painted(30, 64 << 10)),
        ("inline_font", inline_font(5)),
        ("nested_forms", nested_forms(8, 64 << 10)),
    ]
}

/// Zlib at its best ratio (about 1,000 to 1 on repeated bytes).
pub(crate) fn deflate(data: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(data).unwrap();
    encoder.finish().unwrap()
}

/// A stream object: `dict` (without `/Length`) and `data`.
pub(crate) fn stream(dict: &str, data: &[u8]) -> Vec<u8> {
    let mut out = format!("<< {dict} /Length {} >>\nstream\n", data.len()).into_bytes();
    out.extend_from_slice(data);
    out.extend_from_slice(b"\nendstream");
    out
}

/// A PDF of `objects` (object `i + 1` is `objects[i]`) with a correct xref
/// table; object 1 is the catalog.
pub(crate) fn assemble(objects: &[Vec<u8>]) -> Vec<u8> {
    let mut out = b"%PDF-1.7\n".to_vec();
    let offsets = write_objects(&mut out, objects);
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

fn write_objects(out: &mut Vec<u8>, objects: &[Vec<u8>]) -> Vec<usize> {
    let mut offsets = Vec::new();
    for (i, object) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n", i + 1).as_bytes());
        out.extend_from_slice(object);
        out.extend_from_slice(b"\nendobj\n");
    }
    offsets
}

/// Catalog, a one-page tree, the page (`resources` inside its `/Resources`,
/// contents in object 5), Helvetica as `/F1` (object 4), then `extra` as
/// objects 6 on.
pub(crate) fn one_page(resources: &str, contents: Vec<u8>, extra: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
    let mut objects = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        format!(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] \
             /Resources << /Font << /F1 4 0 R >> {resources} >> /Contents 5 0 R >>"
        )
        .into_bytes(),
        FONT.as_bytes().to_vec(),
        contents,
    ];
    objects.extend(extra);
    objects
}

fn text_contents() -> Vec<u8> {
    stream("", TEXT.as_bytes())
}

/// The body of an object stream whose index lists `entries` objects (numbers
/// 100 on) all at offset 0, where an array of `elements` zeros is.
fn same_offset_body(entries: usize, elements: usize) -> (Vec<u8>, usize) {
    let mut index = String::new();
    for i in 0..entries {
        index.push_str(&format!("{} 0 ", 100 + i));
    }
    index.push('\n');
    let mut body = index.clone().into_bytes();
    body.push(b'[');
    body.extend(std::iter::repeat_n(*b"0 ", elements).flatten());
    body.push(b']');
    (body, index.len())
}

/// An object stream (object 6) whose index lists `entries` objects at one
/// offset holding an array of `elements` numbers: a reader that parses each
/// entry builds the array `entries` times.
pub(crate) fn object_stream_same_offset(entries: usize, elements: usize) -> Vec<u8> {
    let (body, first) = same_offset_body(entries, elements);
    let objstm = stream(
        &format!("/Type /ObjStm /N {entries} /First {first} /Filter /FlateDecode"),
        &deflate(&body),
    );
    assemble(&one_page("", text_contents(), vec![objstm]))
}

/// [`object_stream_same_offset`] in a file encrypted with the empty user
/// password (RC4, 128 bits), which every reader opens, and whose xref stream
/// places the members in the object stream: lopdf loads such files by another
/// path, which reads the object streams the xref names itself.
pub(crate) fn object_stream_same_offset_encrypted(entries: usize, elements: usize) -> Vec<u8> {
    object_stream_in_xref_stream(entries, elements, true, false)
}

/// The object stream of [`object_stream_same_offset`], reached another way: the
/// page's contents give their `/Length` as a reference to one of its members,
/// and an xref stream says where that member is. A loader that resolves the
/// length reads the object stream as it parses the page.
pub(crate) fn object_stream_via_length(entries: usize, elements: usize) -> Vec<u8> {
    object_stream_in_xref_stream(entries, elements, false, true)
}

/// Objects 1 to 6 as in [`object_stream_same_offset`], then (`encrypted`) the
/// encryption dictionary, then an xref stream that places the members (100 on)
/// in object 6. With `length_reference`, the page's contents give their length
/// as `100 0 R`.
fn object_stream_in_xref_stream(
    entries: usize,
    elements: usize,
    encrypted: bool,
    length_reference: bool,
) -> Vec<u8> {
    use lopdf::encryption::{EncryptionState, EncryptionVersion, Permissions};
    use lopdf::{Dictionary, Document, Object, Stream, StringFormat};
    let file_id = b"0123456789abcdef".to_vec();
    let mut keyed = Document::new();
    let id = Object::String(file_id.clone(), StringFormat::Hexadecimal);
    keyed.trailer.set("ID", Object::Array(vec![id.clone(), id]));
    let state = EncryptionState::try_from(EncryptionVersion::V2 {
        document: &keyed,
        owner_password: "owner",
        user_password: "",
        key_length: 128,
        permissions: Permissions::all(),
    })
    .unwrap();
    // A stream's data as the file holds it: encrypted with object `number`'s key.
    let seal = |number: u32, data: Vec<u8>| -> Vec<u8> {
        if !encrypted {
            return data;
        }
        let mut object = Object::Stream(Stream::new(Dictionary::new(), data));
        lopdf::encryption::encrypt_object(&state, (number, 0), &mut object).unwrap();
        match object {
            Object::Stream(stream) => stream.content,
            _ => unreachable!(),
        }
    };
    let (body, first) = same_offset_body(entries, elements);
    let objstm = stream(
        &format!("/Type /ObjStm /N {entries} /First {first} /Filter /FlateDecode"),
        &seal(6, deflate(&body)),
    );
    let text = seal(5, TEXT.as_bytes().to_vec());
    let contents = if length_reference {
        let mut contents = b"<< /Length 100 0 R >>\nstream\n".to_vec();
        contents.extend_from_slice(&text);
        contents.extend_from_slice(b"\nendstream");
        contents
    } else {
        stream("", &text)
    };
    let mut objects = one_page("", contents, vec![objstm]);
    let mut trailer = String::new();
    if encrypted {
        let hex = |bytes: &[u8]| bytes.iter().map(|b| format!("{b:02X}")).collect::<String>();
        let dict = state.encode().unwrap();
        let field = |key: &[u8]| dict.get(key).unwrap().clone();
        let (Object::String(o, _), Object::String(u, _), Object::Integer(p)) =
            (field(b"O"), field(b"U"), field(b"P"))
        else {
            panic!("an encryption dictionary without O, U and P: {dict:?}");
        };
        objects.push(
            format!(
                "<< /Filter /Standard /V 2 /R 3 /Length 128 /O <{}> /U <{}> /P {p} >>",
                hex(&o),
                hex(&u),
            )
            .into_bytes(),
        );
        trailer = format!("/Encrypt 7 0 R /ID [<{0}> <{0}>]", hex(&file_id));
    }
    let mut out = b"%PDF-1.7\n".to_vec();
    let offsets = write_objects(&mut out, &objects);
    // The xref stream: objects 0 to itself, then the members 100 on.
    let xref_number = objects.len() + 1;
    let xref_at = out.len();
    let mut data = vec![0u8, 0, 0, 0, 0, 0xFF, 0xFF];
    for offset in offsets.iter().copied().chain([xref_at]) {
        data.push(1);
        data.extend_from_slice(&(offset as u32).to_be_bytes());
        data.extend_from_slice(&0u16.to_be_bytes());
    }
    for i in 0..entries {
        data.push(2);
        data.extend_from_slice(&6u32.to_be_bytes());
        data.extend_from_slice(&(i as u16).to_be_bytes());
    }
    out.extend_from_slice(
        format!(
            "{xref_number} 0 obj\n<< /Type /XRef /Size {} /W [1 4 2] \
             /Index [0 {} 100 {entries}] /Root 1 0 R {trailer} /Length {} >>\nstream\n",
            100 + entries,
            xref_number + 1,
            data.len()
        )
        .as_bytes(),
    );
    out.extend_from_slice(&data);
    out.extend_from_slice(format!("\nendstream\nendobj\nstartxref\n{xref_at}\n%%EOF\n").as_bytes());
    out
}

/// One object of `bytes` bytes: an array of one-digit numbers, raw in the file.
pub(crate) fn raw_array(bytes: usize) -> Vec<u8> {
    let mut array = Vec::with_capacity(bytes + 2);
    array.push(b'[');
    array.extend(std::iter::repeat_n(*b"0 ", bytes / 2).flatten());
    array.push(b']');
    assemble(&one_page("", text_contents(), vec![array]))
}

/// A form XObject's content: `head`, then spaces up to `inflated` bytes;
/// compressed, some thousand times smaller.
fn bomb_form(head: &str, resources: &str, inflated: usize) -> Vec<u8> {
    let mut content = head.as_bytes().to_vec();
    content.resize(inflated.max(content.len()), b' ');
    stream(
        &format!(
            "/Type /XObject /Subtype /Form /BBox [0 0 612 792] {resources} \
             /Filter /FlateDecode"
        ),
        &deflate(&content),
    )
}

/// A page that paints one form `paints` times; the form's content inflates to
/// `inflated` bytes (64 MiB from some 64 KB). A reader that inflates the form at
/// every paint inflates gigabytes.
pub(crate) fn form_painted(paints: usize, inflated: usize) -> Vec<u8> {
    let form = bomb_form(
        "BT /F1 12 Tf 72 700 Td (Form text) Tj ET\n",
        "/Resources << /Font << /F1 4 0 R >> >>",
        inflated,
    );
    let contents = format!("{}{TEXT}", "/X0 Do\n".repeat(paints));
    assemble(&one_page(
        "/XObject << /X0 6 0 R >>",
        stream("", contents.as_bytes()),
        vec![form],
    ))
}

/// A ToUnicode CMap of `entries` one-to-one code mappings, some 20 bytes each.
fn big_cmap(entries: usize) -> Vec<u8> {
    let mut cmap = String::from(
        "/CIDInit /ProcSet findresource begin 12 dict begin begincmap\n\
         /CMapName /Hostile def /CMapType 2 def\n\
         1 begincodespacerange <0000> <FFFF> endcodespacerange\n",
    );
    let mut code = 0u32;
    while (code as usize) < entries {
        let block = (entries - code as usize).min(100);
        cmap.push_str(&format!("{block} beginbfchar\n"));
        for _ in 0..block {
            // Neighbouring codes map to letters seven apart: none merge into a range.
            let letter = 0x41 + code * 7 % 26;
            cmap.push_str(&format!("<{:04X}> <{letter:04X}>\n", code & 0xFFFF));
            code += 1;
        }
        cmap.push_str("endbfchar\n");
    }
    cmap.push_str("endcmap CMapName currentdict /CMap defineresource pop end end\n");
    cmap.into_bytes()
}

/// A font given inline in the page's resources (a dictionary, not a reference)
/// with a ToUnicode map of `selections` thousand codes (2.8 MB for 200),
/// selected `selections` times: a reader
/// that loads an inline font at each `Tf` parses the map each time, and keeps
/// every copy.
pub(crate) fn inline_font(selections: usize) -> Vec<u8> {
    let descendant = "<< /Type /Font /Subtype /CIDFontType2 /BaseFont /Hostile \
                      /CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> \
                      /DW 500 >>";
    let font = format!(
        "/F2 << /Type /Font /Subtype /Type0 /BaseFont /Hostile /Encoding /Identity-H \
         /DescendantFonts [{descendant}] /ToUnicode 6 0 R >>"
    );
    let show = "BT /F2 12 Tf 72 650 Td <00010002> Tj ET\n".repeat(selections);
    let contents = format!("{show}{TEXT}");
    let cmap = stream(
        "/Filter /FlateDecode",
        &deflate(&big_cmap(selections * 1_000)),
    );
    let mut objects = one_page("", stream("", contents.as_bytes()), vec![cmap]);
    // The inline font goes next to F1 in the page's font dictionary.
    objects[2] = format!(
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] \
         /Resources << /Font << /F1 4 0 R {font} >> >> /Contents 5 0 R >>"
    )
    .into_bytes();
    assemble(&objects)
}

/// Forms nested `depth` deep (objects 6 on), each painting the next before
/// spaces up to `inflated` bytes: a reader that holds each form's content while
/// it runs the next holds `depth` of them at once.
pub(crate) fn nested_forms(depth: usize, inflated: usize) -> Vec<u8> {
    let forms = (0..depth)
        .map(|level| {
            let object = 6 + level;
            let (head, resources) = if level + 1 < depth {
                (
                    "/Xn Do\n".to_owned(),
                    format!("/Resources << /XObject << /Xn {} 0 R >> >>", object + 1),
                )
            } else {
                (
                    "BT /F1 12 Tf 72 700 Td (Deepest form) Tj ET\n".to_owned(),
                    "/Resources << /Font << /F1 4 0 R >> >>".to_owned(),
                )
            };
            bomb_form(&head, &resources, inflated)
        })
        .collect();
    let contents = format!("/Xn Do\n{TEXT}");
    assemble(&one_page(
        "/XObject << /Xn 6 0 R >>",
        stream("", contents.as_bytes()),
        forms,
    ))
}
