//! URL validation and redirect resolution never panic; a canonical URL re-validates
//! to itself.
#![no_main]
use libfuzzer_sys::fuzz_target;
use webfetch::CanonicalUrl;

fuzz_target!(|data: &[u8]| {
    let input = String::from_utf8_lossy(data);
    if let Ok(url) = CanonicalUrl::parse(&input) {
        let again = CanonicalUrl::parse(url.as_str()).expect("canonical URLs re-validate");
        assert_eq!(again.as_str(), url.as_str());
        let _ = url.resolve_redirect(Some(&input));
        let _ = url.origin().robots_url();
    }
});
