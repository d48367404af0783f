use std::io::Read;
fn main() {
    let mut s = String::new();
    std::io::stdin().read_to_string(&mut s).unwrap();
    let url = url::Url::parse(
        &std::env::args()
            .nth(1)
            .unwrap_or("https://example.com/a/b".into()),
    )
    .unwrap();
    match webfetch::extract::extract_html(&s, &url) {
        Ok(d) => {
            println!(
                "TITLE: {:?} LANG: {:?}\n-----\n{}",
                d.title, d.language, d.markdown
            );
        }
        Err(e) => println!("ERR {e:?}"),
    }
}
