use url::Url;

use super::super::super::article::measure::measure;
use super::super::super::dom;
use super::super::extract_as;
use super::forest::{Forest, TreeNode};
use super::{
    Context, Dense, INSIDE, Inherited, hashed, leaf_blocks, meeting, name_tokens, siblings_alike,
};
use crate::vocabulary::PageType;

fn parsed(html: &str) -> dom::Document {
    dom::parse(html, dom::Scripting::On)
}

fn body(doc: &dom::Document) -> ego_tree::NodeId {
    super::super::super::root::survey(doc).candidates[5].expect("body")
}

#[test]
fn a_tree_is_walked_to_its_leaf_and_a_malformed_one_ends() {
    let tree = [
        TreeNode::Split(1, 0.5, 1, 2),
        TreeNode::Leaf(-1.0),
        TreeNode::Leaf(2.0),
    ];
    let leaf = |tree: &[TreeNode], features: &[f32]| Forest::new(0.0, &[tree]).log_odds(features);
    assert_eq!(leaf(&tree, &[0.0, 0.5]), -1.0, "at the threshold goes left");
    assert_eq!(leaf(&tree, &[0.0, 0.7]), 2.0);
    assert_eq!(leaf(&tree, &[0.0]), -1.0, "a feature past the row reads 0");
    // Leaves at different depths: the walk stays on a leaf it reaches early.
    let uneven = [
        TreeNode::Split(0, 0.5, 1, 2),
        TreeNode::Leaf(1.0),
        TreeNode::Split(1, 0.5, 3, 4),
        TreeNode::Leaf(3.0),
        TreeNode::Leaf(4.0),
    ];
    assert_eq!(leaf(&uneven, &[0.0, 9.0]), 1.0);
    assert_eq!(leaf(&uneven, &[1.0, 0.0]), 3.0);
    assert_eq!(leaf(&uneven, &[1.0, 1.0]), 4.0);
    let forest = Forest::new(0.5, &[&tree, &uneven]);
    assert_eq!(
        forest.log_odds(&[1.0, 1.0]),
        0.5 + 2.0 + 4.0,
        "baseline plus each tree's leaf"
    );
    let cycle = [TreeNode::Split(0, 0.5, 0, 0)];
    assert_eq!(leaf(&cycle, &[0.0]), 0.0, "a cycle ends after its length");
    let dangling = [TreeNode::Split(0, 0.5, 7, 7)];
    assert_eq!(leaf(&dangling, &[0.0]), 0.0);
}

#[test]
fn tokens_hash_with_fnv_1a_and_names_split_into_words() {
    // FNV-1a of "a" is 0xe40c292c: the training script reads these buckets.
    assert_eq!(hashed((10, 7), "a"), 10 + 0xe40c_292c % 7);
    assert_eq!(hashed((10, 7), "A"), hashed((10, 7), "a"));
    let tokens = name_tokens(Some("product-Reviews__item x reviews"), Some("main2"));
    assert_eq!(tokens, ["item", "main", "product", "Reviews"]);
}

#[test]
fn leaf_blocks_hold_their_own_text_and_inherit_their_ancestors() {
    let doc = parsed(
        "<html><body><main><section><h1>Title</h1><p>First <b>bold</b> words.</p></section></main>\
         <div><ul><li class=a>One</li><li class=a>Two</li><li class=a>Three</li>\
         <li class=b>Four</li></ul></div><table><tr><td>Cell text</td></tr></table></body></html>",
    );
    let measured = measure(&doc, body(&doc));
    let blocks = leaf_blocks(&doc, &measured);
    let texts: Vec<&str> = blocks.iter().map(|b| b.text.as_str()).collect();
    assert_eq!(
        texts,
        [
            "Title",
            "First bold words.",
            "One",
            "Two",
            "Three",
            "Four",
            "Cell text"
        ]
    );
    let context = Context {
        page_type: PageType::Product,
        content_root: None,
        title_words: Default::default(),
        within: None,
    };
    let inherited = Inherited::new(&doc, &measured, &context);
    let bits = |i: usize| inherited.inside[blocks[i].node];
    let bit = |kind: Dense| {
        1u16 << INSIDE
            .iter()
            .position(|&k| k as u32 == kind as u32)
            .unwrap()
    };
    assert_eq!(bits(1), bit(Dense::InMain) | bit(Dense::InSection));
    assert_eq!(bits(2), bit(Dense::InList));
    assert_eq!(bits(6), bit(Dense::InTable));
    assert_eq!(inherited.depth[blocks[1].node], 3, "main, section, p");
    assert_eq!(
        siblings_alike(&doc, &measured, &blocks, &inherited.in_within),
        [0, 0, 2, 2, 2, 0, 0]
    );
    // The paragraph meets the heading one level up (their section) and the
    // cell meets it at the body, whose share of the text is all of it.
    let to_h1 = meeting(&measured, blocks[0].node);
    assert_eq!(to_h1[blocks[1].node].0, 0.1);
    assert_eq!(to_h1[blocks[6].node].1, 1.0);
    assert!(to_h1[blocks[1].node].1 < 0.5);
}

/// A product page: its description and specifications, beside the furniture
/// a shop wraps around them (placeholders for script-filled widgets, a
/// shipping box, a seller box).
fn product_page() -> String {
    let loading = "<div class=\"wt-skeleton\"><p>Loading</p></div>".repeat(30);
    format!(
        "<html><head><title>Stoneware mug</title></head><body>\
         <header><a href=\"/\">Shop</a></header>\
         <main><div class=\"listing-page\">\
         <div class=\"buy-box\"><h1>Handmade stoneware mug</h1><p class=\"price\">USD 99.60</p>\
         <p>Low in stock, only 1 left</p></div>\
         <div class=\"description\"><h2>Description</h2>\
         <p>A ceramic mug with a convenient handle, wheel thrown and glazed by hand in our \
         studio. Great for coffee or any hot or cold drink, it holds 350 millilitres and \
         is safe in the dishwasher, though washing by hand keeps the glaze bright.</p>\
         <p>Each mug is fired twice in a gas kiln, so the glaze varies from one piece to the \
         next: yours will be unique, with its own runs and speckles.</p></div>\
         <div class=\"shipping\"><p>Order today to get by Mar 17-27</p>\
         <p>Returns and exchanges accepted within 14 days</p></div>\
         <div class=\"recs\">{loading}</div></div></main></body></html>"
    )
}

#[test]
fn a_product_reading_keeps_the_description_and_drops_placeholders() {
    let url = Url::parse("https://shop.example/listing/1/mug").expect("url");
    let markdown = extract_as(&product_page(), &url, PageType::Product)
        .expect("content")
        .markdown;
    assert!(markdown.contains("# Handmade stoneware mug"), "{markdown}");
    assert!(
        markdown.contains("A ceramic mug with a convenient handle"),
        "{markdown}"
    );
    assert!(markdown.contains("fired twice in a gas kiln"), "{markdown}");
    let placeholders = markdown.matches("Loading").count();
    assert!(
        placeholders < 30,
        "{placeholders} placeholders kept:\n{markdown}"
    );
}

#[test]
fn the_training_script_reads_the_same_feature_layout() {
    let path = format!("{}/scripts/train_blocks.py", env!("CARGO_MANIFEST_DIR"));
    let script = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let constant = |name: &str| -> u32 {
        let line = script
            .lines()
            .find(|l| l.starts_with(&format!("{name} = ")))
            .unwrap_or_else(|| panic!("{name} not in {path}"));
        line[name.len() + 3..]
            .split('+')
            .map(|term| match term.trim() {
                "DENSE" => super::DENSE,
                n => n.parse().unwrap_or_else(|_| panic!("{line}")),
            })
            .sum()
    };
    assert_eq!(constant("DENSE"), super::DENSE);
    assert_eq!(constant("FEATURES"), super::FEATURES);
    assert_eq!(constant("TAG_H1"), Dense::TagH1 as u32);
}
