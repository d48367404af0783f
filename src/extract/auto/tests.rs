//! Auto mode: the classifier on declared types and URL shapes, each
//! reading on pages of its kind, and the rule that a page with text always gets
//! an answer.

use url::Url;

use super::thread::Comments;
use super::{classify, extract, extract_as, may_be_one_post, thread_outweighs};
use crate::extract::extract_html;
use crate::vocabulary::ExtractionMode;
use crate::vocabulary::PageType;

fn url(path: &str) -> Url {
    Url::parse(&format!("https://example.com{path}")).unwrap()
}

fn fixture(name: &str) -> String {
    let path = format!(
        "{}/tests/fixtures/article/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn kind(html: &str, path: &str) -> PageType {
    classify::classify(html, &url(path))
}

/// Fails, showing the Markdown, unless it holds every one of `wanted`.
fn assert_has(markdown: &str, wanted: &[&str]) {
    for text in wanted {
        assert!(markdown.contains(text), "missing {text:?} in:\n{markdown}");
    }
}

/// Fails, showing the Markdown, if it holds any of `unwanted`.
fn assert_lacks(markdown: &str, unwanted: &[&str]) {
    for text in unwanted {
        assert!(!markdown.contains(text), "kept {text:?} in:\n{markdown}");
    }
}

const PROSE: &str = "<p>Residents of three river towns began clearing mud from their homes \
    on Thursday, a week after the highest water in four decades forced thousands to leave.</p>";

#[test]
fn declared_types_decide_first() {
    let ld = |t: &str| {
        format!(
            "<script type=\"application/ld+json\">{{\"@type\": \"{t}\"}}</script><main>{PROSE}</main>"
        )
    };
    for (html, expected) in [
        (ld("Product"), PageType::Product),
        (ld("DiscussionForumPosting"), PageType::Forum),
        (ld("QAPage"), PageType::Forum),
        (ld("CollectionPage"), PageType::Listing),
        (ld("TechArticle"), PageType::Documentation),
        (ld("NewsArticle"), PageType::Article),
        (
            format!("<meta property=\"og:type\" content=\"article\"><main>{PROSE}</main>"),
            PageType::Article,
        ),
        (
            format!("<div itemscope itemtype=\"https://schema.org/Product\">{PROSE}</div>"),
            PageType::Product,
        ),
    ] {
        assert_eq!(kind(&html, "/page"), expected, "{html}");
    }
    // Posts marked up as `Comment`s make a thread, whatever lists the page
    // declares beside; an article's one comment does not, nor a blog's comments
    // under its declared post.
    let comments = |n: usize| {
        let posts = format!("<div itemscope itemtype=\"http://schema.org/Comment\">{PROSE}</div>")
            .repeat(n);
        format!(
            "<meta property=\"og:type\" content=\"article\">{}<main>{posts}</main>",
            ld("ItemList")
        )
    };
    assert_eq!(kind(&comments(3), "/page"), PageType::Forum);
    assert_eq!(kind(&comments(2), "/page"), PageType::Listing);
    let replies =
        format!("<div itemscope itemtype=\"http://schema.org/Comment\">{PROSE}</div>").repeat(3);
    let blog = format!("{}<div id=\"comments\">{replies}</div>", ld("BlogPosting"));
    assert_eq!(kind(&blog, "/page"), PageType::Article);
}

#[test]
fn url_shapes_and_structure_decide_what_declares_nothing() {
    let plain = format!("<main>{PROSE}</main>");
    for (path, expected) in [
        ("/docs/retry-policy", PageType::Documentation),
        ("/forum/thread-12", PageType::Forum),
        ("/questions/12/why", PageType::Forum),
        ("/collections/shoes", PageType::Listing),
        ("/products/pack-40", PageType::Product),
        ("/blog/river-towns", PageType::Article),
        ("/2025/11/river-towns", PageType::Article),
        ("/", PageType::Service),
        ("/monitoring", PageType::Service),
    ] {
        assert_eq!(kind(&plain, path), expected, "{path}");
    }
    let code = "<main><pre>a</pre><pre>b</pre><pre>c</pre><pre>d</pre></main>";
    assert_eq!(kind(code, "/x"), PageType::Documentation);
}

#[test]
fn a_service_page_keeps_every_section_and_leaves_the_furniture() {
    let html = fixture("service.html")
        .replace(
            "<section class=\"hero\">",
            "<div class=\"cookie-banner\">We use cookies <button>Accept</button></div>\
             <ul><li><a href=\"/a\">Home</a></li><li><a href=\"/b\">Blog</a></li><li><a href=\"/c\">Docs</a></li></ul>\
             <section class=\"hero\">",
        )
        // Calls to action drawn as links; a longer button-styled link names
        // where it leads.
        .replace(
            "the moment something breaks.</p>",
            "the moment something breaks.</p>\
             <p><a class=\"btn btn-primary\" href=\"/demo\">Book a demo</a>\
             <a class=\"hero-cta\" href=\"/signup\">Try it free</a></p>\
             <p><a class=\"btn\" href=\"/integrations\">See all forty integrations with chat and paging tools</a></p>",
        );
    let document = extract_as(&html, &url("/"), PageType::Service).unwrap();
    let markdown = &document.markdown;
    assert_has(
        markdown,
        &[
            "# Know your site is down",
            "PingWell checks your websites",
            "### Checks from six regions",
            "### Alert routing",
            "| Team | 100 | $49 per month |",
            "See all forty integrations",
        ],
    );
    assert_lacks(
        markdown,
        &[
            "cookies",
            "Accept",
            "Blog",
            "Start free trial",
            "Privacy",
            "Book a demo",
            "Try it free",
        ],
    );
    assert_eq!(document.page_type, Some(PageType::Service));
}

#[test]
fn a_listing_keeps_every_item() {
    let document =
        extract_as(&fixture("listing.html"), &url("/search"), PageType::Listing).unwrap();
    assert_has(&document.markdown, &["reqwest", "ureq", "hyper", "isahc"]);
}

#[test]
fn a_thread_keeps_every_post() {
    let html = fixture("forum-discourse.html");
    let document = extract_as(&html, &url("/t/cache-grows/12"), PageType::Forum).unwrap();
    assert_has(
        &document.markdown,
        &[
            "Since upgrading to 2.4 the cache directory grows",
            "Eviction runs in each process",
            "Upgrading to 2.5 fixed it",
        ],
    );
}

/// A question-and-answer page: the question and two answers, each with a
/// `comments` container of remarks, or (`answers_in_comments`) the answers
/// themselves inside one.
fn qa_page(answers_in_comments: bool) -> String {
    let remark = |text: &str| {
        format!(
            "<div class=\"comments\"><ul><li><span class=\"comment-copy\">{text}</span></li></ul></div>"
        )
    };
    let answer = |text: &str, remark_text: &str| {
        format!(
            "<div class=\"answer\"><div class=\"post-text\"><p>{text}</p></div>{}</div>",
            remark(remark_text)
        )
    };
    let answers = answer(
        "Mount the backup disk read-only between runs, so that ransomware on the server cannot reach the copies it would encrypt along with everything else.",
        "Also keep one copy offline.",
    ) + &answer(
        "A mirror copies every deletion and every corruption to the second disk at once, so it protects against a dead disk and nothing else at all.",
        "Exactly, RAID is about uptime.",
    );
    let answers = if answers_in_comments {
        format!("<div class=\"comments\">{answers}</div>")
    } else {
        answers
    };
    format!(
        "<html><head><script type=\"application/ld+json\">{{\"@type\": \"QAPage\"}}</script></head><body>\
         <div class=\"question\"><h1>Why is RAID not a backup?</h1><div class=\"post-text\"><p>My server mirrors its two \
         disks, and a colleague says that this is still not a backup of the data on them. Why not?</p></div></div>\
         <div id=\"answers\">{answers}</div></body></html>"
    )
}

#[test]
fn a_question_page_reads_its_answers_without_the_remarks_under_them() {
    let document = extract(&qa_page(false), &url("/questions/2888/raid")).unwrap();
    assert_eq!(document.page_type, Some(PageType::Forum));
    let markdown = &document.markdown;
    assert_has(
        markdown,
        &[
            "My server mirrors",
            "Mount the backup disk",
            "A mirror copies",
        ],
    );
    assert_lacks(markdown, &["keep one copy offline", "RAID is about uptime"]);
    // Where the answers themselves sit in a `comments` container, it is read.
    let document = extract(&qa_page(true), &url("/questions/2888/raid")).unwrap();
    assert_has(
        &document.markdown,
        &["Mount the backup disk", "A mirror copies"],
    );
}

/// A thread of repeated posts, the longest in the middle: article scoring would
/// pick that one post. The second poster shows a title, counts and a signature.
const THREAD: &str = r#"<html><head><title>Cache grows without bound</title></head><body>
    <div class="layout"><div class="main-col"><h1>Cache grows without bound</h1>
    <div class="posts">
      <article class="message post-1"><div class="user">ana_r</div><time>Oct 29, 2025</time>
        <div class="message-body"><p>Since upgrading to 2.4 the cache directory grows past the limit we set, a few gigabytes a day.</p></div>
        <ul class="actions"><li><a href="/r/1">Reply</a></li><li><a href="/q/1">Quote</a></li><li><a href="/l/1">Like</a></li></ul></article>
      <article class="message post-2"><div class="user">jberg<h5 class="userTitle">Well-known member</h5>
        <dl class="message-userExtras"><dt>Joined</dt><dd>Mar 3, 2019</dd><dt>Messages</dt><dd>1,204</dd></dl></div><time>Oct 29, 2025</time>
        <div class="message-body"><p>Eviction runs in each process, so with many processes the limit is checked by each of them against its own view of the directory, and none of them sees the total.</p>
        <p>Set one cache directory per process, or run the eviction from one place, and the total stays under the limit as it did before.</p></div>
        <aside class="message-signature">Three nodes, one cache, no regrets.</aside></article>
      <article class="message post-3"><div class="user">ana_r</div><time>Oct 30, 2025</time>
        <div class="message-body"><p>Upgrading to 2.5 fixed it for us, thanks for the pointer.</p></div></article>
    </div></div>
    <div class="side-col"><h3>Similar threads</h3><ul><li><a href="/t/1">Cache misses after restart</a></li><li><a href="/t/2">Disk full</a></li><li><a href="/t/3">Eviction order</a></li></ul></div>
    </div></body></html>"#;

#[test]
fn a_thread_keeps_every_post_in_order_with_its_author_and_date() {
    let document = extract_as(THREAD, &url("/threads/cache-grows.12"), PageType::Forum).unwrap();
    let markdown = &document.markdown;
    let at = |text: &str| {
        markdown
            .find(text)
            .unwrap_or_else(|| panic!("missing {text:?} in:\n{markdown}"))
    };
    let order = [
        at("ana_r"),
        at("Oct 29, 2025"),
        at("Since upgrading to 2.4"),
        at("jberg"),
        at("Eviction runs in each process"),
        at("Set one cache directory"),
        at("Oct 30, 2025"),
        at("Upgrading to 2.5 fixed it"),
    ];
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{markdown}");
    assert_lacks(markdown, &["Similar threads", "Disk full", "Quote"]);
    // What the posters' column says about them besides their names is not the thread.
    assert_lacks(
        markdown,
        &["Well-known member", "Joined", "1,204", "no regrets"],
    );
    // Posts in a container the SRD drops by name (`id="comments"`) are read.
    let named = THREAD.replace("<div class=\"posts\">", "<div id=\"comments\">");
    assert!(
        !extract_html(&named, &url("/t/1"), ExtractionMode::Srd)
            .map(|e| e.document)
            .unwrap()
            .markdown
            .contains("jberg")
    );
    let document = extract_as(&named, &url("/threads/cache-grows.12"), PageType::Forum).unwrap();
    assert_eq!(&document.markdown, markdown);
}

#[test]
fn a_consent_dialog_of_repeated_prose_is_not_the_thread() {
    let category = |name: &str| {
        format!(
            "<div class=\"category\"><h4>{name} cookies</h4><p>These cookies may be set through our \
             site by our partners and used to build a profile of your interests, to measure how you \
             use the site and to show you relevant material on other sites you visit later.</p></div>"
        )
    };
    let dialog = format!(
        "<div role=\"dialog\" aria-label=\"Privacy Preference Center\">{}</div></body>",
        [
            "Strictly necessary",
            "Performance",
            "Functional",
            "Targeting",
            "Social media"
        ]
        .map(category)
        .concat()
    );
    let html = THREAD.replace("</body>", &dialog);
    let document = extract_as(&html, &url("/threads/cache-grows.12"), PageType::Forum).unwrap();
    assert_has(
        &document.markdown,
        &["Since upgrading to 2.4", "Eviction runs in each process"],
    );
    assert_lacks(&document.markdown, &["cookies"]);
}

#[test]
fn a_page_whose_scored_extraction_is_a_stray_line_is_read_whole() {
    // A link post: its content is a title and a link, no prose for article
    // scoring, which finds one line of a menu.
    let html = "<html><body><div><p>Expand Navigation Collapse Navigation</p></div>\
        <main><div class=\"post\"><a href=\"/r/technology\">r/technology</a>\
        <h1>Regulator to Europe: restrict our satellite providers and we will ban yours</h1>\
        <a href=\"https://news.example.com/satellites\">news.example.com</a></div></main></body></html>";
    for page_type in [PageType::Article, PageType::Forum] {
        let document = extract_as(html, &url("/r/technology/comments/1/x"), page_type).unwrap();
        assert_has(
            &document.markdown,
            &["Regulator to Europe", "news.example.com"],
        );
    }
}

/// A question thread that shows its first post in a block of its own, beside
/// the block of replies, three levels above them, under the forum's notice;
/// `lead` is the first post's element.
fn question_in_its_own_block(lead: &str) -> String {
    let block = |posts: &str| {
        format!(
            "<div class=\"block\"><div class=\"block-container\"><div class=\"block-body\">{posts}</div></div></div>"
        )
    };
    let reply = |n: usize| {
        format!(
            "<article class=\"message\"><div class=\"user\">user{n}</div><p>Reply {n}: the cooler \
             matters more than the brand; look at the noise figures in reviews and pick the quietest \
             card in your budget.</p></article>"
        )
    };
    let question = format!(
        "<{lead}><div class=\"user\">ana</div><p>I am planning to buy a new graphics card for \
         gaming at 1440p and the many brands confuse me: which one cools best for the price?</p></{}>",
        lead.split_whitespace().next().unwrap_or(lead)
    );
    format!(
        "<html><body><div class=\"page\"><h1>Which card cools best?</h1>\
         <p>Welcome to the graphics cards forum. Please search before you post, keep the \
         discussion civil and on topic, and mark the answer that solved your question.</p>{}{}</div></body></html>",
        block(&question),
        block(&(1..=3).map(reply).collect::<String>())
    )
}

#[test]
fn a_question_in_its_own_block_is_read_when_it_is_a_post_like_its_replies() {
    let url = url("/threads/which-card.3859106/");
    let post = extract_as(
        &question_in_its_own_block("article class=\"message starter\""),
        &url,
        PageType::Forum,
    )
    .unwrap();
    let markdown = &post.markdown;
    let question = markdown.find("I am planning to buy");
    assert!(
        question.is_some_and(|q| markdown.find("Reply 1:").is_some_and(|r| q < r)),
        "{markdown}"
    );
    // Prose of another kind that far up is not taken for the question.
    let other = extract_as(
        &question_in_its_own_block("div class=\"promo\""),
        &url,
        PageType::Forum,
    )
    .unwrap();
    assert_has(&other.markdown, &["Reply 3:"]);
    assert_lacks(&other.markdown, &["I am planning to buy"]);
}

/// A story of six paragraphs with three short comments below it.
fn story_with_a_few_comments() -> String {
    let comments: String = (1..=3)
        .map(|i| format!("<div class=\"comment\"><b>reader{i}</b><p>Comment number {i} says the article was a fine read indeed.</p></div>"))
        .collect();
    let story = PROSE.repeat(6);
    format!(
        "<body><div class=\"story\"><h1>River towns</h1>{story}</div><div class=\"comments\">{comments}</div></body>"
    )
}

/// A question and, beside it, the list of its answers (Stack Exchange's
/// layout): the longest answer is what article scoring picks.
const QUESTION_AND_ANSWERS: &str = r#"<html><head><title>Why is except: pass bad?</title></head><body>
    <div id="content"><h1>Why is except: pass bad?</h1>
    <div id="mainbar">
      <div id="question" class="question"><div class="votes">12</div>
        <div class="post-body"><p>I often see comments saying that except: pass is discouraged. Why is this bad, when I only want the code to go on?</p></div>
        <div class="user-info">asked by vader</div></div>
      <div id="answers"><h2>3 Answers</h2>
        <div class="answer"><div class="votes">40</div><div class="post-body"><p>Catching any error hides the ones you never expected, and passing on it hides that anything went wrong at all, so the bug surfaces far away from its cause.</p>
          <p>Catch only the exceptions you know how to recover from, and log or re-raise the rest so that they are seen.</p></div><div class="user-info">answered by poke</div></div>
        <div class="answer"><div class="votes">9</div><div class="post-body"><p>It also catches KeyboardInterrupt and SystemExit on old versions, so the program cannot be stopped.</p></div><div class="user-info">answered by ana</div></div>
        <div class="answer"><div class="votes">2</div><div class="post-body"><p>Sometimes it is fine, for a best-effort cleanup whose failure changes nothing.</p></div><div class="user-info">answered by jberg</div></div>
      </div>
    </div></div></body></html>"#;

#[test]
fn a_question_beside_its_list_of_answers_is_read_before_them() {
    let document = extract_as(
        QUESTION_AND_ANSWERS,
        &url("/questions/215/why-is-except-pass-bad"),
        PageType::Forum,
    )
    .unwrap();
    let markdown = &document.markdown;
    let at = |text: &str| {
        markdown
            .find(text)
            .unwrap_or_else(|| panic!("{text}:\n{markdown}"))
    };
    assert!(at("I often see comments") < at("Catching any error"));
    assert!(at("Catching any error") < at("It also catches"));
    assert!(at("It also catches") < at("Sometimes it is fine"));
}

#[test]
fn an_article_with_comments_read_as_a_thread_keeps_the_article() {
    let html = story_with_a_few_comments();
    let thread = extract_as(&html, &url("/threads/1"), PageType::Forum).unwrap();
    let article = extract_as(&html, &url("/threads/1"), PageType::Article).unwrap();
    assert_eq!(thread.markdown, article.markdown);
    assert!(thread.markdown.contains("Residents of three river towns"));
}

#[test]
fn a_short_article_extraction_gives_way_to_a_thread_four_times_its_words() {
    for (article, thread, expected) in [
        (100, 400, true),
        (100, 399, false),
        (299, 1196, true),
        (300, 3000, false), // a long article extraction stands
        (10, 40, true),
    ] {
        assert_eq!(
            may_be_one_post(article) && thread_outweighs(article, thread, Comments::Dropped),
            expected,
            "{article} / {thread}"
        );
    }
    // Its comments must hold twenty times its words.
    for (article, thread, expected) in [(100, 1999, false), (100, 2000, true), (20, 400, true)] {
        assert_eq!(
            may_be_one_post(article) && thread_outweighs(article, thread, Comments::Read),
            expected,
            "{article} / {thread} with comments"
        );
    }
    // A story with a few comments below it stays an article.
    let html = story_with_a_few_comments();
    let document = extract(&html, &url("/blog/river-towns")).unwrap();
    assert_eq!(document.page_type, Some(PageType::Article));
    // So does a short post under a thread of comments five times its words in a
    // container named `comments`: on an article they are its comments (a blog's
    // open thread).
    let comments: String = (1..=30)
        .map(|i| format!("<div class=\"comment\"><b>reader{i}</b><p>Reply {i}: the eviction runs in each process here too, and one directory per process fixed it.</p></div>"))
        .collect();
    let story = PROSE.repeat(4);
    let html = format!(
        "<body><article><h1>Open thread</h1>{story}</article><div id=\"comments\">{comments}</div></body>"
    );
    let document = extract(&html, &url("/blog/open-thread")).unwrap();
    assert_eq!(document.page_type, Some(PageType::Article));
}

#[test]
fn a_story_link_under_a_long_discussion_is_read_as_a_thread() {
    // A link aggregator's story: a title, a link and a byline, then the
    // readers' thread in a container named `comments`, which is the content.
    let comments: String = (1..=40)
        .map(|i| format!("<li class=\"comment\"><a href=\"/~reader{i}\">reader{i}</a><p>Reply {i}: the eviction runs in each process here too, and one directory per process fixed it for us after a week of tracing.</p></li>"))
        .collect();
    let html = format!(
        "<body><div class=\"story\"><h1><a href=\"https://example.org/post\">Cache eviction across processes</a></h1>\
         <p>via <a href=\"/~poster\">poster</a> 2 hours ago, 40 comments</p></div>\
         <ol class=\"comments\">{comments}</ol></body>"
    );
    let document = extract(&html, &url("/story/24/01/12/cache-eviction")).unwrap();
    assert_eq!(document.page_type, Some(PageType::Forum));
    assert!(document.markdown.contains("Reply 1: the eviction"));
    assert!(document.markdown.contains("Reply 40: the eviction"));
    assert!(document.markdown.contains("reader40"));
}

#[test]
fn an_faq_in_an_article_is_not_a_thread_and_a_topic_index_is_not_a_forum() {
    let faq = format!(
        "<script type=\"application/ld+json\">{{\"@graph\": [{{\"@type\": \"BlogPosting\"}}, \
         {{\"@type\": \"FAQPage\", \"mainEntity\": [{{\"@type\": \"Question\", \
         \"acceptedAnswer\": {{\"@type\": \"Answer\"}}}}]}}]}}</script><main>{PROSE}</main>"
    );
    assert_eq!(kind(&faq, "/page"), PageType::Article);
    let question = "<script type=\"application/ld+json\">{\"@type\": \"Question\"}</script>";
    assert_eq!(kind(question, "/page"), PageType::Forum);
    let plain = format!("<main>{PROSE}</main>");
    assert_eq!(
        kind(&plain, "/topics/camping/best-stoves"),
        PageType::Service
    );
    assert_eq!(
        kind(&plain, "/topic/1103020-payment-issues"),
        PageType::Forum
    );
    assert_eq!(kind(&plain, "/travel-forum/japan"), PageType::Forum);
}

/// A buying guide in one block per part, each block named for its part and its
/// text three wrappers deep: the first block's paragraphs carry the commas
/// article scoring counts, the others as much prose each without them, so
/// scoring chooses the first block alone (over 300 words: one story, not one
/// post of a thread).
fn guide_in_blocks() -> String {
    let scored = "<p>Oil, filter, gasket, drain plug, washer, funnel, gloves, rags, a pan, a jack, \
        stands, chocks, a torch, and a wrench are what the first change needs, and the manual.</p>";
    let plain = |part: &str| {
        format!(
            "<p>The {part} wears with every mile driven and a shop will check it at each visit \
             so that small faults are found before they grow into the kind of repair that \
             costs a month of savings and a week without the car in the driveway.</p>"
        )
    };
    let block = |part: &str, body: String| {
        format!(
            "<section class=\"{part}\"><div class=\"row\"><div class=\"col\">\
             <div class=\"inner\">{body}</div></div></div></section>"
        )
    };
    format!(
        "<head><meta property=\"og:type\" content=\"article\"></head>\
         <body><div class=\"guide\">{}{}{}{}</div></body>",
        block("oil", scored.repeat(12)),
        block(
            "brakes",
            plain("brake pad").repeat(7) + &plain("brake disc")
        ),
        block("tyres", plain("tyre").repeat(7) + &plain("tyre valve")),
        block(
            "battery",
            plain("battery").repeat(7) + &plain("battery clamp")
        ),
    )
}

#[test]
fn an_article_in_blocks_reads_every_block_where_scoring_chose_one() {
    let html = guide_in_blocks();
    let article = extract_html(&html, &url("/guide"), ExtractionMode::Article)
        .unwrap()
        .document
        .markdown;
    assert_has(&article, &["Oil, filter"]);
    assert_lacks(&article, &["brake pad"]);
    let document = extract(&html, &url("/guide")).unwrap();
    assert_eq!(document.page_type, Some(PageType::Article));
    assert_has(
        &document.markdown,
        &[
            "Oil, filter",
            "The brake pad",
            "The tyre valve",
            "The battery clamp",
        ],
    );
}

#[test]
fn an_article_that_is_all_prose_widens_from_less_than_the_usual_share() {
    // Two blocks: the wrapper holds under 2.5 times the scored prose, but it is
    // nothing but prose.
    let two_blocks = |html: &str| {
        let start = html.find("<section class=\"tyres\"").unwrap();
        let end = html.find("</div></body>").unwrap();
        format!("{}{}", &html[..start], &html[end..])
    };
    let html = two_blocks(&guide_in_blocks());
    let document = extract(&html, &url("/guide")).unwrap();
    assert_has(&document.markdown, &["Oil, filter", "The brake disc"]);
    // A wrapper with as much prose, but a tenth of its text in links, is a
    // page's frame at that share: the scored block alone.
    let menu: String = (0..30)
        .map(|i| format!("<a href=\"/part/{i}\">Spare part number {i}</a> "))
        .collect();
    let framed = html.replace(
        "<div class=\"guide\">",
        &format!("<div class=\"guide\"><p>{menu}</p>"),
    );
    let document = extract(&framed, &url("/guide")).unwrap();
    assert_has(&document.markdown, &["Oil, filter"]);
    assert_lacks(&document.markdown, &["brake disc"]);
}

#[test]
fn teasers_of_other_posts_are_not_prose_to_widen_to() {
    // The same blocks, each under a heading that links to another post.
    let html = guide_in_blocks().replace(
        "<div class=\"inner\"><p>The",
        "<div class=\"inner\"><h3><a href=\"/other\">Another post</a></h3><p>The",
    );
    let document = extract(&html, &url("/guide")).unwrap();
    assert_has(&document.markdown, &["Oil, filter"]);
    assert_lacks(&document.markdown, &["brake pad"]);
}

#[test]
fn a_landing_page_keeps_its_hero_banner_and_drops_an_ad_banner() {
    let html = format!(
        "<body><div class=\"experience-heroBanner\"><h2>Lunar Pilot</h2>\
         <p>Defy the rules of space and time with the new Lunar Pilot chronograph.</p></div>\
         <div class=\"banner-ad\"><p>Save 20% on insurance today with our partner.</p></div>\
         <section><h2>Craft</h2>{PROSE}</section></body>"
    );
    let document = extract_as(&html, &url("/"), PageType::Service).unwrap();
    assert_has(
        &document.markdown,
        &["Lunar Pilot", "Defy the rules", "Residents"],
    );
    assert_lacks(&document.markdown, &["insurance"]);
}

#[test]
fn a_section_header_in_the_content_is_read_and_the_site_header_is_not() {
    let html = format!(
        "<body><div class=\"site-header\"><p>Acme Cloud, the cloud for builders since 2012.</p></div>\
         <main><div class=\"StyledHeadlineHeader-sc-1\"><h2>Built for scale</h2>\
         <p>Enterprise-grade infrastructure trusted by thousands of teams.</p></div>\
         <section>{PROSE}</section></main></body>"
    );
    let document = extract_as(&html, &url("/"), PageType::Service).unwrap();
    assert_has(
        &document.markdown,
        &["Built for scale", "Enterprise-grade", "Residents"],
    );
    assert_lacks(&document.markdown, &["since 2012"]);
}

#[test]
fn panels_a_click_opens_are_read_and_other_hidden_elements_are_not() {
    let html = format!(
        "<body><div class=\"mega-menu\" style=\"display:none\"><p>Amino acids, vitamins and \
         minerals for every day of the week.</p></div>\
         <main><h1>Pack 40</h1>{PROSE}\
         <div class=\"tab-pane\" style=\"display: none\"><p>Made of rip-stop nylon with a rain cover.</p></div>\
         <div class=\"faq__answer\" style=\"visibility: hidden\"><p>Returns are free for thirty days.</p></div>\
         <div id=\"item-42-content\" style=\"height: 0; visibility: hidden\"><p>Fits the carry-on limits of most airlines, with room for a week of clothes.</p></div>\
         </main></body>"
    );
    let document = extract_as(&html, &url("/p/pack-40"), PageType::Product).unwrap();
    assert_has(
        &document.markdown,
        &[
            "Residents",
            "rip-stop nylon",
            "Returns are free",
            "carry-on limits",
        ],
    );
    assert_lacks(&document.markdown, &["Amino acids"]);
}

#[test]
fn a_whole_page_extraction_widens_a_root_that_holds_little_of_the_page() {
    // The SRD takes the first `<article>`: here one review of a product page.
    let html = format!(
        "<body><div class=\"product\"><h1>Pack 40</h1><p>A forty litre pack for long days in the hills.</p>\
         <table><tr><th>Weight</th><td>1.2 kg</td></tr><tr><th>Volume</th><td>40 l</td></tr></table>{PROSE}</div>\
         <article class=\"review\"><p>Carried it for a week, no complaints.</p></article></body>"
    );
    let document = extract_as(&html, &url("/p/pack-40"), PageType::Product).unwrap();
    assert_has(
        &document.markdown,
        &[
            "A forty litre pack",
            "| Weight | 1.2 kg |",
            "Residents",
            "Carried it for a week",
        ],
    );
}

#[test]
fn a_product_leaves_out_other_products_but_a_list_of_products_stays() {
    let cards = |n: usize| -> String {
        (1..=n)
            .map(|i| format!("<div class=\"card\"><a href=\"/p/{i}\">Pack {i}0</a><span>${i}9.00</span></div>"))
            .collect()
    };
    let product = format!(
        "<body><div class=\"product\"><h1>Pack 40</h1><p>$129.00, in stock.</p>{}</div>\
         <div class=\"recs\"><h2>Also viewed</h2>{}</div></body>",
        PROSE.repeat(3),
        cards(4)
    );
    let document = extract_as(&product, &url("/p/pack-40"), PageType::Product).unwrap();
    assert!(
        document.markdown.contains("$129.00, in stock."),
        "{}",
        document.markdown
    );
    assert!(
        !document.markdown.contains("Pack 20"),
        "{}",
        document.markdown
    );
    let category = format!("<body><h1>Packs</h1>{}</body>", cards(6));
    let document = extract_as(&category, &url("/p/packs"), PageType::Product).unwrap();
    assert!(
        document.markdown.contains("Pack 20"),
        "{}",
        document.markdown
    );
}

#[test]
fn a_product_leaves_out_sections_its_headings_name_as_recommendations() {
    // Two suggested products: too few to be a grid of cards; the heading says what
    // they are.
    let html = format!(
        "<body><div class=\"product\"><h1>Pack 40</h1><p>$129.00, in stock.</p>{PROSE}</div>\
         <div class=\"carousel\"><h2>Customers who viewed this item also viewed</h2>\
         <ol><li><a href=\"/p/2\">Pack 20, a lighter pack for day hikes and short trips</a></li>\
         <li><a href=\"/p/3\">Pack 30, the middle size for weekends away</a></li></ol></div>\
         <div class=\"specs\"><h2>Specifications</h2><p>Volume 40 litres, weight 1.2 kg, made of recycled nylon.</p></div></body>"
    );
    let document = extract_as(&html, &url("/p/pack-40"), PageType::Product).unwrap();
    assert!(
        !document.markdown.contains("Pack 20"),
        "{}",
        document.markdown
    );
    assert!(
        document.markdown.contains("Volume 40 litres"),
        "{}",
        document.markdown
    );
    // Read as a listing, the same section stays.
    let document = extract_as(&html, &url("/p/pack-40"), PageType::Listing).unwrap();
    assert!(
        document.markdown.contains("Pack 20"),
        "{}",
        document.markdown
    );
}

#[test]
fn a_whole_page_extraction_leaves_out_screen_reader_only_labels_but_not_collapsed_content() {
    let html = format!(
        "<body><main><h1>Packs</h1>{PROSE}<div class=\"price\">\
         <span class=\"visually-hidden visually-hidden--inline\">Regular price</span> $129\
         <small class=\"unit-price caption\"><span class=\"screen-reader-text\">Unit price</span></small>\
         <div class=\"faq-answer hidden\">Collapsed answer</div>\
         <span class=\"sr-only\">Sale price</span><span class=\"hiddén hidden-xs\">Kept</span></div>\
         </main></body>"
    );
    let document = extract_as(&html, &url("/c/packs"), PageType::Listing).unwrap();
    assert!(document.markdown.contains("$129"), "{}", document.markdown);
    assert!(document.markdown.contains("Kept"), "{}", document.markdown);
    assert!(
        document.markdown.contains("Collapsed answer"),
        "{}",
        document.markdown
    );
    assert_lacks(
        &document.markdown,
        &["Regular price", "Unit price", "Sale price"],
    );
}

#[test]
fn a_product_adds_the_facts_only_its_json_ld_shows_and_names_the_source() {
    let html = format!(
        "<head><script type=\"application/ld+json\">{{\"@type\":\"Product\",\"name\":\"Pack 40\",\
         \"offers\":{{\"price\":\"129.00\",\"priceCurrency\":\"USD\",\
         \"availability\":\"https://schema.org/InStock\"}},\
         \"description\":\"A forty litre pack with a hip belt that carries the load.\"}}</script></head>\
         <body><main><h1>Pack 40</h1><p>Only $129, while stocks last.</p>{PROSE}</main></body>"
    );
    let document = extract_as(&html, &url("/p/pack-40"), PageType::Product).unwrap();
    assert!(
        document.markdown.starts_with(
            "# Pack 40\n\nProduct facts from the page's structured data (JSON-LD):\n\n\
             - Availability: in stock\n\nA forty litre pack with a hip belt that carries the load.\n\n\
             Only $129"
        ),
        "{}",
        document.markdown
    );
    // Article mode and other page types never add them.
    let document = extract_as(&html, &url("/p/pack-40"), PageType::Article).unwrap();
    assert!(
        !document.markdown.contains("JSON-LD"),
        "{}",
        document.markdown
    );
}

#[test]
fn a_page_with_text_only_in_boilerplate_still_gets_an_answer_without_hidden_text() {
    let html = "<body><header><h1>Opening hours</h1><p>Mon to Fri, 9 to 5</p></header>\
                <nav><a href=\"/\">Home</a></nav><div hidden>INJECTED one</div>\
                <footer><span aria-hidden=\"true\">INJECTED two</span>Call 555 0100</footer></body>";
    let srd = extract_html(html, &url("/"), ExtractionMode::Srd)
        .map(|e| e.document)
        .unwrap_err();
    assert_eq!(srd.details_json()["error"], "no_extractable_content");
    let document = extract(html, &url("/")).unwrap();
    assert_has(
        &document.markdown,
        &["Opening hours", "Mon to Fri, 9 to 5", "Call 555 0100"],
    );
    assert!(
        !document.markdown.contains("INJECTED"),
        "{}",
        document.markdown
    );
    assert!(document.page_type.is_some());
    for blank in [
        "",
        "<body><div hidden>INJECTED</div><script>x()</script></body>",
    ] {
        let error = extract(blank, &url("/")).unwrap_err();
        assert_eq!(error.details_json()["error"], "no_extractable_content");
    }
}

#[test]
fn only_auto_mode_says_what_it_found_and_srd_mode_is_unchanged() {
    let html = fixture("service.html");
    let auto = extract_html(&html, &url("/"), ExtractionMode::Auto).unwrap();
    assert_eq!(auto.document.page_type, Some(PageType::Service));
    for mode in [ExtractionMode::Srd, ExtractionMode::Article] {
        let other = extract_html(&html, &url("/"), mode).unwrap();
        assert_eq!(other.document.page_type, None, "{mode}");
    }
}

#[test]
fn page_types_have_one_spelling() {
    for t in [
        PageType::Article,
        PageType::Forum,
        PageType::Product,
        PageType::Listing,
        PageType::Documentation,
        PageType::Service,
    ] {
        assert_eq!(t.as_str().parse::<PageType>(), Ok(t));
        assert_eq!(serde_json::to_value(t).unwrap(), t.as_str());
    }
    assert!("collection".parse::<PageType>().is_err());
}
