//! Walls: answers that are a site refusing an automated client, not its content
//! (extension of the agent front doors). A bot-management product's challenge
//! or block page, a CAPTCHA standing in for the page, or an offer to sell the
//! page to a crawler (HTTP 402, "pay per crawl"). A model handed such a page as
//! content summarises "Checking if the site connection is secure", or retries
//! a call that can not succeed; named as a wall, it knows to try another source.
//!
//! [`detect`] is a pure function of the status, the headers and the first bytes
//! of the body. Each vendor is recognised by what its public documentation
//! says its challenge and block responses carry: a response header it sets, or
//! the script and form markers of its interstitial page. Words alone never
//! make a wall: a page that explains Cloudflare's "Just a moment..." screen is
//! content. Markers in a body count only in a small page (an interstitial is a
//! few kilobytes of script; an article quoting one is not) or in a refusal
//! (status 403, 429 or 503).

use http::HeaderMap;
use memchr::memmem;

use crate::error::FetchError;
use crate::transport::HttpResponse;

/// How much of a body [`detect`] reads: the interstitials put their markers in
/// the first kilobytes.
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) const HEAD_BYTES: usize = 64 << 10;

/// A page larger than this with status 200 is content, whatever it mentions.
const SMALL_PAGE_BYTES: usize = 48 << 10;

/// Who put up a bot wall.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) enum Vendor {
    /// Cloudflare's managed challenge, JS challenge or block page.
    Cloudflare,
    /// Akamai Bot Manager.
    Akamai,
    /// DataDome.
    DataDome,
    /// HUMAN Security (formerly PerimeterX).
    Human,
    /// AWS WAF's CAPTCHA or challenge action.
    AwsWaf,
    /// Vercel's firewall (bot protection, attack challenge mode).
    Vercel,
    /// A page that is only a CAPTCHA (reCAPTCHA, hCaptcha, Turnstile), of no
    /// vendor named above.
    Captcha,
}

impl Vendor {
    /// The `details.vendor` token.
    #[cfg_attr(feature = "internals", visibility::make(pub))]
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Vendor::Cloudflare => "cloudflare",
            Vendor::Akamai => "akamai",
            Vendor::DataDome => "datadome",
            Vendor::Human => "human",
            Vendor::AwsWaf => "aws_waf",
            Vendor::Vercel => "vercel",
            Vendor::Captcha => "captcha",
        }
    }
}

/// What a wall is.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) enum Wall {
    /// A bot challenge or block page.
    BotChallenge(Vendor),
    /// HTTP 402: the site sells access to crawlers; the price it asks, from
    /// `crawler-price` when it says one.
    PaymentRequired {
        /// The `crawler-price` header's value, as sent.
        price: Option<String>,
    },
}

/// The error for `response` when it is a wall (see [`detect`]).
pub(crate) fn refuse(response: &HttpResponse) -> Result<(), FetchError> {
    let status_text = &response.status_text;
    match detect(response.status, &response.headers, &response.body) {
        None => Ok(()),
        Some(Wall::BotChallenge(vendor)) => Err(FetchError::bot_challenge(
            response.status,
            status_text,
            vendor.as_str(),
        )),
        Some(Wall::PaymentRequired { price }) => {
            Err(FetchError::payment_required(status_text, price))
        }
    }
}

/// The error for a page a browser rendered when what it settled on is still a
/// wall: the challenge did not complete by itself within the call's budget (the
/// page's own navigation would have replaced it; the render loop waits for it
/// while [`is_challenge_dom`] holds).
pub(crate) fn refuse_rendered(html: &str) -> Result<(), FetchError> {
    match rendered_challenge(html) {
        Some(vendor) => Err(FetchError::bot_challenge(200, "OK", vendor.as_str())),
        None => Ok(()),
    }
}

/// Whether a DOM a browser settled on is a bot challenge, by the test
/// [`refuse_rendered`] applies to it: the render loop then waits for the page's
/// own navigation (a challenge that completes by itself) before answering.
pub(crate) fn is_challenge_dom(html: &str) -> bool {
    rendered_challenge(html).is_some()
}

/// The vendor of the bot challenge a rendered DOM is, if it is one. The DOM
/// stands for a 200 with no headers: the document's own status and headers were
/// judged when it was fetched.
fn rendered_challenge(html: &str) -> Option<Vendor> {
    match detect(200, &HeaderMap::new(), html.as_bytes()) {
        Some(Wall::BotChallenge(vendor)) => Some(vendor),
        _ => None,
    }
}

/// The wall `status`, `headers` and the first bytes of the body (`head`, at most
/// [`HEAD_BYTES`] are read) are, if any.
#[cfg_attr(feature = "internals", visibility::make(pub))]
pub(crate) fn detect(status: u16, headers: &HeaderMap, head: &[u8]) -> Option<Wall> {
    if status == 402 {
        let price = header(headers, "crawler-price").map(str::to_owned);
        return Some(Wall::PaymentRequired { price });
    }
    if let Some(vendor) = by_header(headers) {
        return Some(Wall::BotChallenge(vendor));
    }
    let head = &head[..head.len().min(HEAD_BYTES)];
    let refused = matches!(status, 403 | 429 | 503);
    let small = status == 200 && head.len() < SMALL_PAGE_BYTES;
    if !(refused || small) {
        return None;
    }
    by_markers(status, headers, head).map(Wall::BotChallenge)
}

/// The vendors whose challenge and block responses carry a header of their own.
fn by_header(headers: &HeaderMap) -> Option<Vendor> {
    // Cloudflare: `cf-mitigated: challenge` on every challenge response.
    if header(headers, "cf-mitigated").is_some_and(|v| v.eq_ignore_ascii_case("challenge")) {
        return Some(Vendor::Cloudflare);
    }
    // AWS WAF: `x-amzn-waf-action: captcha` or `challenge`.
    if header(headers, "x-amzn-waf-action").is_some() {
        return Some(Vendor::AwsWaf);
    }
    // Vercel: `x-vercel-mitigated: challenge` or `deny`.
    if header(headers, "x-vercel-mitigated").is_some() {
        return Some(Vendor::Vercel);
    }
    None
}

/// The vendors recognised by their interstitial's markers, in a small page or a
/// refusal.
fn by_markers(status: u16, headers: &HeaderMap, head: &[u8]) -> Option<Vendor> {
    let has = |marker: &str| contains(head, marker);
    let server = header(headers, "server").unwrap_or("");
    // Cloudflare: the challenge platform's script and options, or its block page.
    if has("/cdn-cgi/challenge-platform/") && (has("_cf_chl_opt") || has("cf-chl")) {
        return Some(Vendor::Cloudflare);
    }
    if status == 403 && server.eq_ignore_ascii_case("cloudflare") && has("cf-error-details") {
        return Some(Vendor::Cloudflare);
    }
    // DataDome: its header on a refusal, or its CAPTCHA's delivery host.
    if status != 200
        && (header(headers, "x-datadome").is_some() || header(headers, "x-dd-b").is_some())
    {
        return Some(Vendor::DataDome);
    }
    if has("captcha-delivery.com") && has("dd=") {
        return Some(Vendor::DataDome);
    }
    // HUMAN (PerimeterX): the block page's app id and CAPTCHA element.
    if (has("_pxAppId") || has("window._pxUuid")) && (has("px-captcha") || has("_pxCaptcha")) {
        return Some(Vendor::Human);
    }
    // Akamai Bot Manager: its challenge script, or the edge's access denied page.
    if has("/_sec/cp_challenge/") || (has("bm-verify") && has("/_sec/")) {
        return Some(Vendor::Akamai);
    }
    if status == 403 && server.eq_ignore_ascii_case("AkamaiGHost") && has("Access Denied") {
        return Some(Vendor::Akamai);
    }
    // AWS WAF without its header: the challenge's integration script.
    if has("AwsWafIntegration") && has("awswaf") {
        return Some(Vendor::AwsWaf);
    }
    // Vercel's checkpoint page.
    if has("Vercel Security Checkpoint") && has("/.well-known/vercel/security/") {
        return Some(Vendor::Vercel);
    }
    captcha_only(head).then_some(Vendor::Captcha)
}

/// A page whose point is a CAPTCHA: a widget, and words asking the reader to
/// prove they are human, in a page too small to be anything else.
fn captcha_only(head: &[u8]) -> bool {
    const WIDGETS: [&str; 4] = [
        "g-recaptcha",
        "h-captcha",
        "cf-turnstile",
        "captcha-container",
    ];
    const ASKS: [&str; 5] = [
        "verify you are human",
        "verify that you are human",
        "are you a robot",
        "not a robot",
        "complete the security check",
    ];
    WIDGETS.iter().any(|w| contains(head, w))
        && ASKS.iter().any(|ask| contains_ignore_case(head, ask))
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get(name)
        .and_then(|value| value.to_str().ok())
        .map(str::trim)
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    memmem::find(haystack, needle.as_bytes()).is_some()
}

fn contains_ignore_case(haystack: &[u8], needle: &str) -> bool {
    let needle = needle.as_bytes();
    haystack
        .windows(needle.len())
        .any(|window| window.eq_ignore_ascii_case(needle))
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, HeaderValue::from_static(value));
        }
        map
    }

    const CLOUDFLARE_INTERSTITIAL: &str = "<!DOCTYPE html><html><head><title>Just a moment...</title>\
        </head><body><div class=\"main-wrapper\"><h1>example.com</h1><p>Checking if the site \
        connection is secure</p></div><script>(function(){window._cf_chl_opt={cvId: '3',\
        cType: 'managed'};var a=document.createElement('script');a.src='/cdn-cgi/challenge-platform/\
        h/g/orchestrate/chl_page/v1?ray=8a';})();</script></body></html>";

    #[test]
    fn each_vendors_wall_is_named() {
        let datadome = "<html><body><script>var dd={'rt':'c','cid':'AHrlqA','hsh':'14'}</script>\
            <script src=\"https://ct.captcha-delivery.com/c.js\"></script></body></html>";
        let human = "<html><head><script>window._pxAppId='PXabc';window._pxUuid='1'</script></head>\
            <body><div id=\"px-captcha\"></div></body></html>";
        let akamai_block = "<HTML><HEAD><TITLE>Access Denied</TITLE></HEAD><BODY><H1>Access Denied</H1>\
            You don't have permission to access this server.<P>Reference&#32;&#35;18.abc</BODY></HTML>";
        let akamai_challenge =
            "<html><script src=\"/_sec/cp_challenge/ak-challenge-4-3.js\"></script></html>";
        let aws = "<html><script src=\"https://abc.token.awswaf.com/abc/challenge.js\"></script>\
            <script>AwsWafIntegration.getToken()</script></html>";
        let captcha = "<html><title>Security check</title><body><p>Please verify you are human.</p>\
            <div class=\"g-recaptcha\" data-sitekey=\"x\"></div></body></html>";
        let table: &[(u16, HeaderMap, &str, Vendor)] = &[
            (
                403,
                headers(&[("cf-mitigated", "challenge")]),
                "",
                Vendor::Cloudflare,
            ),
            (
                200,
                headers(&[]),
                CLOUDFLARE_INTERSTITIAL,
                Vendor::Cloudflare,
            ),
            (
                503,
                headers(&[("server", "cloudflare")]),
                CLOUDFLARE_INTERSTITIAL,
                Vendor::Cloudflare,
            ),
            (
                403,
                headers(&[("server", "cloudflare")]),
                "<title>Attention Required! | Cloudflare</title><div id=\"cf-error-details\">",
                Vendor::Cloudflare,
            ),
            (
                405,
                headers(&[("x-amzn-waf-action", "captcha")]),
                "",
                Vendor::AwsWaf,
            ),
            (
                202,
                headers(&[("x-amzn-waf-action", "challenge")]),
                "",
                Vendor::AwsWaf,
            ),
            (200, headers(&[]), aws, Vendor::AwsWaf),
            (
                429,
                headers(&[("x-vercel-mitigated", "challenge")]),
                "",
                Vendor::Vercel,
            ),
            (
                403,
                headers(&[("x-datadome", "protected")]),
                "",
                Vendor::DataDome,
            ),
            (403, headers(&[]), datadome, Vendor::DataDome),
            (403, headers(&[]), human, Vendor::Human),
            (
                403,
                headers(&[("server", "AkamaiGHost")]),
                akamai_block,
                Vendor::Akamai,
            ),
            (200, headers(&[]), akamai_challenge, Vendor::Akamai),
            (200, headers(&[]), captcha, Vendor::Captcha),
        ];
        for (status, headers, body, vendor) in table {
            assert_eq!(
                detect(*status, headers, body.as_bytes()),
                Some(Wall::BotChallenge(*vendor)),
                "{status} {headers:?} {body}"
            );
        }
    }

    #[test]
    fn a_rendered_challenge_is_told_from_a_rendered_page() {
        assert!(is_challenge_dom(CLOUDFLARE_INTERSTITIAL));
        assert!(refuse_rendered(CLOUDFLARE_INTERSTITIAL).is_err());
        let contact = "<html><body><h1>Contact us</h1><form><textarea></textarea>\
            <div class=\"g-recaptcha\" data-sitekey=\"x\"></div><button>Send</button></form></body></html>";
        let long = format!(
            "{CLOUDFLARE_INTERSTITIAL}{}",
            "<p>More of the article.</p>".repeat(3_000)
        );
        for page in [
            contact,
            &long,
            "<html><body><p>A page.</p></body></html>",
            "",
        ] {
            assert!(!is_challenge_dom(page), "{page:.80}");
            assert!(refuse_rendered(page).is_ok(), "{page:.80}");
        }
    }

    #[test]
    fn pay_per_crawl_says_its_price() {
        let asked = headers(&[("crawler-price", "USD 0.01")]);
        assert_eq!(
            detect(402, &asked, b""),
            Some(Wall::PaymentRequired {
                price: Some("USD 0.01".to_owned())
            })
        );
        assert_eq!(
            detect(402, &HeaderMap::new(), b""),
            Some(Wall::PaymentRequired { price: None })
        );
    }

    #[test]
    fn pages_that_only_mention_walls_are_content() {
        let explainer = format!(
            "<html><title>Why you see Just a moment...</title><article><p>Cloudflare shows \
             \"Checking if the site connection is secure\" and loads /cdn-cgi/challenge-platform/ \
             with window._cf_chl_opt while it decides. DataDome, captcha-delivery.com, \
             AwsWafIntegration and px-captcha do the same.</p>{}</article></html>",
            "<p>More of the article.</p>".repeat(3_000)
        );
        let contact = "<html><body><h1>Contact us</h1><form><textarea></textarea>\
            <div class=\"g-recaptcha\" data-sitekey=\"x\"></div><button>Send</button></form></body></html>";
        let not_found = "<html><body><h1>Not found</h1></body></html>";
        let table: &[(u16, HeaderMap, &str)] = &[
            (200, headers(&[]), &explainer),
            (200, headers(&[]), contact),
            (
                200,
                headers(&[("server", "cloudflare"), ("cf-ray", "8a")]),
                "<p>A page.</p>",
            ),
            (
                403,
                headers(&[("server", "cloudflare")]),
                "<p>Forbidden by the site itself.</p>",
            ),
            (404, headers(&[("server", "AkamaiGHost")]), not_found),
            (
                403,
                headers(&[("server", "nginx")]),
                "<h1>Access Denied</h1>",
            ),
            (500, headers(&[("cf-mitigated", "none")]), ""),
        ];
        for (status, headers, body) in table {
            assert_eq!(
                detect(*status, headers, body.as_bytes()),
                None,
                "{status} {body:.80}"
            );
        }
    }
}
