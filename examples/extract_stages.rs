//! Times the stages of extraction (decode, parse, survey, convert, whitespace) on a
//! file or on the dense synthetic page of `benches/extract.rs`. Run with
//! `cargo run --release --example extract_stages -- [FILE]`.
use std::time::Instant;

use webfetch::content::charset::decode;
use webfetch::extract::{dom, markdown, normalize_whitespace, root};

fn main() {
    let bytes = match std::env::args().nth(1) {
        Some(path) => std::fs::read(path).expect("read"),
        None => synthetic(5 << 20),
    };
    let url = url::Url::parse("https://example.com/a").unwrap();
    if let Ok(out) = std::env::var("DUMP_MD") {
        // Markdown of every file given after the output dir, one `.md` each.
        for path in std::env::args().skip(1) {
            let bytes = std::fs::read(&path).unwrap();
            let md = match webfetch::extract::extract_html(&decode(&bytes, None, true).text, &url) {
                Ok(d) => d.markdown,
                Err(e) => format!("ERROR {e:?}"),
            };
            let name = std::path::Path::new(&path)
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned();
            std::fs::write(format!("{out}/{name}.md"), md).unwrap();
        }
        return;
    }
    if let Ok(dir) = std::env::var("LINEARITY") {
        linearity(&dir, &url);
        return;
    }
    if let Ok(path) = std::env::var("DUMP") {
        std::fs::write(path, &bytes).unwrap();
        return;
    }
    if let Ok(n) = std::env::var("CONVERT_ONLY") {
        let text = decode(&bytes, None, true).text;
        let doc = dom::parse(&text);
        let survey = root::survey(&doc);
        let r = root::select_root(&doc, &survey).unwrap();
        for _ in 0..n.parse().unwrap_or(10) {
            std::hint::black_box(normalize_whitespace(&markdown::convert(r, &url)));
        }
        return;
    }
    if let Ok(n) = std::env::var("PARSE_ONLY") {
        let text = decode(&bytes, None, true).text;
        for _ in 0..n.parse().unwrap_or(10) {
            std::hint::black_box(dom::parse(&text));
        }
        return;
    }
    for _ in 0..5 {
        let t = Instant::now();
        let tokens = tokenize_only(std::str::from_utf8(&bytes).unwrap_or(""));
        eprintln!("tokenizer alone {:?} ({tokens} tokens)", t.elapsed());
        let t = Instant::now();
        let decoded = decode(&bytes, None, true);
        let t_decode = t.elapsed();
        let t = Instant::now();
        let doc = dom::parse(&decoded.text);
        let t_parse = t.elapsed();
        let t = Instant::now();
        let survey = root::survey(&doc);
        let r = root::select_root(&doc, &survey).unwrap();
        let t_survey = t.elapsed();
        if std::env::var_os("COUNT").is_some() {
            eprintln!(
                "nodes {} size {}",
                doc.tree.nodes().count(),
                std::mem::size_of::<ego_tree::NodeRef<'_, dom::Node>>()
                    + std::mem::size_of::<dom::Node>()
            );
        }
        let t = Instant::now();
        let md = markdown::convert(r, &url);
        let t_convert = t.elapsed();
        let t = Instant::now();
        let md = normalize_whitespace(&md);
        let t_ws = t.elapsed();
        let t = Instant::now();
        drop(doc);
        let t_drop = t.elapsed();
        eprintln!(
            "{} bytes: decode {:?} parse {:?} survey {:?} convert {:?} ws {:?} drop {:?} (md {})",
            bytes.len(),
            t_decode,
            t_parse,
            t_survey,
            t_convert,
            t_ws,
            t_drop,
            md.len()
        );
    }
}

fn synthetic(size: usize) -> Vec<u8> {
    let block = r#"<section class="part"><h2>Section heading</h2>
<p>Residents of three river towns began clearing mud from their homes on <a href="/t">Thursday</a>,
a week after the highest water levels in <strong>four decades</strong> forced thousands to leave.</p>
<div class="ad"><img src="/ad.gif" alt="Ad"> Sponsored content</div>
<ul><li>First <em>point</em></li><li>Second point<ul><li>nested</li></ul></li></ul>
<table><tr><th>Year</th><th>Level</th></tr><tr><td>2024</td><td>7.1 m</td></tr></table>
<pre><code class="language-rust">fn main() {
    println!("hello");
}</code></pre>
<blockquote><p>The dikes held where we had rebuilt them.</p></blockquote></section>
"#;
    let mut page = String::from(
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>Bench</title></head><body><nav><a href=/>Home</a></nav><article>",
    );
    while page.len() + block.len() < size {
        page.push_str(block);
    }
    page.push_str("</article><footer>f</footer></body></html>");
    page.into_bytes()
}

fn tokenize_only(html: &str) -> usize {
    use html5ever::tendril::StrTendril;
    use html5ever::tokenizer::{BufferQueue, Token, TokenSink, TokenSinkResult, Tokenizer};
    struct Count(std::cell::Cell<usize>);
    impl TokenSink for Count {
        type Handle = ();
        fn process_token(&self, _t: Token, _l: u64) -> TokenSinkResult<()> {
            self.0.set(self.0.get() + 1);
            TokenSinkResult::Continue
        }
    }
    let tok = Tokenizer::new(Count(Default::default()), Default::default());
    let q = BufferQueue::default();
    q.push_back(StrTendril::from_slice(html));
    let _ = tok.feed(&q);
    tok.end();
    tok.sink.0.get()
}

fn time_extract(bytes: &[u8], url: &url::Url) -> f64 {
    let mut best = f64::MAX;
    for _ in 0..5 {
        let t = Instant::now();
        let decoded = decode(bytes, None, true);
        let _ = std::hint::black_box(webfetch::extract::extract_html(&decoded.text, url));
        best = best.min(t.elapsed().as_secs_f64() * 1e3);
    }
    best
}

fn linearity(dir: &str, url: &url::Url) {
    use std::io::Read as _;
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    paths.sort();
    let pages: Vec<Vec<u8>> = paths
        .iter()
        .map(|p| {
            let mut v = Vec::new();
            flate2::read::GzDecoder::new(std::fs::File::open(p).unwrap())
                .read_to_end(&mut v)
                .unwrap();
            v
        })
        .collect();
    let singles: Vec<f64> = pages.iter().map(|p| time_extract(p, url)).collect();
    for mib in [1usize, 2, 4, 5] {
        let mut out = Vec::new();
        let mut sum = 0.0;
        let mut n = 0;
        for (page, t) in pages.iter().zip(&singles) {
            if out.len() + page.len() > mib << 20 {
                break;
            }
            out.extend_from_slice(page);
            sum += t;
            n += 1;
        }
        let whole = time_extract(&out, url);
        let md = webfetch::extract::extract_html(&decode(&out, None, true).text, url)
            .map_or(0, |d| d.markdown.len());
        eprintln!(
            "{mib} MiB ({n} pages, {} bytes): concatenated {whole:.1} ms, sum of pages {sum:.1} ms, md {md}",
            out.len()
        );
    }
}
