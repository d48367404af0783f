//! A product's facts from its JSON-LD: name, brand, price,
//! availability, rating, SKU, specifications and description, for the facts the
//! visible page hides (in tabs, in scripts, or nowhere).
//!
//! The visible page comes first: a fact already in the extracted Markdown is not
//! repeated. What is left is added after it under a line that names its source,
//! so a model can tell what the page showed from what its structured data
//! declares.

use serde_json::{Map, Value};

use super::super::{dom, root};
use super::signals;

/// schema.org types read as a product.
const PRODUCT_TYPES: [&str; 4] = [
    "Product",
    "ProductGroup",
    "IndividualProduct",
    "ProductModel",
];
/// How deep into a JSON-LD block a product is looked for (`@graph`, arrays,
/// `mainEntity`).
const MAX_DEPTH: usize = 6;
/// Characters of a description kept.
const MAX_DESCRIPTION: usize = 2_000;
/// Specifications (`additionalProperty`) kept.
const MAX_SPECS: usize = 40;
/// Characters of one fact's value kept.
const MAX_VALUE: usize = 200;

/// The line that opens the facts and names where they came from.
pub(crate) const SOURCE_LINE: &str = "Product facts from the page's structured data (JSON-LD):";

/// A product's facts as its JSON-LD declares them, each already written as text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Facts {
    pub(crate) name: Option<String>,
    pub(crate) brand: Option<String>,
    /// The amount as written (`19.99`, or `10.00 to 25.00` for a range).
    pub(crate) price: Option<String>,
    pub(crate) currency: Option<String>,
    /// `in stock`, `out of stock`, `pre-order`, ...
    pub(crate) availability: Option<String>,
    /// `4.6 out of 5 (120 reviews)`.
    pub(crate) rating: Option<String>,
    pub(crate) sku: Option<String>,
    /// `additionalProperty` name and value pairs.
    pub(crate) specs: Vec<(String, String)>,
    pub(crate) description: Option<String>,
}

/// The first product the page's JSON-LD blocks declare, if any.
pub(crate) fn facts(html: &str) -> Option<Facts> {
    signals::json_ld_blocks(html)
        .filter_map(|block| serde_json::from_str::<Value>(block.trim()).ok())
        .find_map(|value| find_product(&value, 0).map(read_facts))
}

/// The facts of `facts` that `markdown` does not show, as Markdown opened by
/// [`SOURCE_LINE`]; `None` when the page shows them all.
pub(crate) fn supplement(markdown: &str, facts: &Facts) -> Option<String> {
    let shown = Shown::of(markdown);
    let mut items: Vec<String> = Vec::new();
    let mut fact = |label: &str, value: &Option<String>, visible: bool| {
        if let Some(value) = value.as_deref().filter(|_| !visible) {
            items.push(format!("- {label}: {value}"));
        }
    };
    fact("Name", &facts.name, shown.text(facts.name.as_deref()));
    fact("Brand", &facts.brand, shown.text(facts.brand.as_deref()));
    let price = facts.price.as_ref().map(|price| match &facts.currency {
        Some(currency) => format!("{price} {currency}"),
        None => price.clone(),
    });
    fact("Price", &price, shown.price(facts.price.as_deref()));
    fact(
        "Availability",
        &facts.availability,
        shown.text(facts.availability.as_deref()),
    );
    fact("Rating", &facts.rating, false);
    fact("SKU", &facts.sku, shown.text(facts.sku.as_deref()));
    if facts.rating.is_some() && shown.rating(facts.rating.as_deref()) {
        items.retain(|item| !item.starts_with("- Rating:"));
    }
    for (name, value) in &facts.specs {
        if !shown.text(Some(value)) {
            items.push(format!("- {name}: {value}"));
        }
    }
    let description = facts
        .description
        .as_deref()
        .filter(|description| !shown.passage(description));
    if items.is_empty() && description.is_none() {
        return None;
    }
    let mut out = format!("{SOURCE_LINE}\n\n");
    if !items.is_empty() {
        out.push_str(&items.join("\n"));
        out.push_str("\n\n");
    }
    if let Some(description) = description {
        out.push_str(description);
        out.push('\n');
    }
    Some(out.trim_end().to_owned())
}

/// The extracted Markdown, lowercased with its whitespace collapsed, for "is this
/// fact already shown?".
struct Shown(String);

impl Shown {
    fn of(markdown: &str) -> Self {
        Shown(collapse(markdown))
    }

    fn text(&self, value: Option<&str>) -> bool {
        value.is_some_and(|value| self.0.contains(&collapse(value)))
    }

    /// A price is shown when its amount is, as written or without trailing zero
    /// cents (`20.00` shown as `$20`).
    fn price(&self, price: Option<&str>) -> bool {
        let Some(price) = price else {
            return false;
        };
        let first = price.split(" to ").next().unwrap_or(price);
        let short = first
            .strip_suffix(".00")
            .or_else(|| first.strip_suffix(".0"))
            .unwrap_or(first);
        let comma = first.replace('.', ",");
        [first, short, comma.as_str()]
            .iter()
            .any(|amount| contains_number(&self.0, amount))
    }

    /// A rating is shown when its value is, next to a word of rating.
    fn rating(&self, rating: Option<&str>) -> bool {
        let Some(value) = rating.and_then(|r| r.split_whitespace().next()) else {
            return false;
        };
        contains_number(&self.0, value)
            && ["rating", "rated", "review", "star", "out of"]
                .iter()
                .any(|word| self.0.contains(word))
    }

    /// A passage is shown when its first words are.
    fn passage(&self, passage: &str) -> bool {
        let head: Vec<&str> = passage.split_whitespace().take(12).collect();
        self.0.contains(&collapse(&head.join(" ")))
    }
}

/// `text` lowercased, whitespace runs as one space, Markdown emphasis and escapes
/// dropped.
fn collapse(text: &str) -> String {
    let cleaned: String = text
        .chars()
        .filter(|c| !matches!(c, '*' | '_' | '\\' | '`'))
        .flat_map(char::to_lowercase)
        .collect();
    cleaned.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether `number` occurs in `text` not as part of a longer number.
fn contains_number(text: &str, number: &str) -> bool {
    if number.is_empty() {
        return false;
    }
    let digit = |c: Option<char>| c.is_some_and(|c| c.is_ascii_digit());
    text.match_indices(number).any(|(at, _)| {
        !digit(text[..at].chars().next_back()) && !digit(text[at + number.len()..].chars().next())
    })
}

/// The first object of a product type in `value`, depth first.
fn find_product(value: &Value, depth: usize) -> Option<&Map<String, Value>> {
    if depth > MAX_DEPTH {
        return None;
    }
    match value {
        Value::Object(object) => {
            if is_product(object) {
                return Some(object);
            }
            object
                .values()
                .find_map(|child| find_product(child, depth + 1))
        }
        Value::Array(items) => items.iter().find_map(|item| find_product(item, depth + 1)),
        _ => None,
    }
}

fn is_product(object: &Map<String, Value>) -> bool {
    let named = |name: &str| {
        let name = name.rsplit('/').next().unwrap_or(name);
        PRODUCT_TYPES.contains(&name)
    };
    match object.get("@type") {
        Some(Value::String(name)) => named(name),
        Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).any(named),
        _ => false,
    }
}

fn read_facts(product: &Map<String, Value>) -> Facts {
    let offer = product.get("offers").and_then(first_object);
    let (price, currency) = offer.map(price_of).unwrap_or_default();
    Facts {
        name: product.get("name").and_then(fact),
        brand: product.get("brand").and_then(named_text),
        price,
        currency,
        availability: offer
            .and_then(|offer| offer.get("availability"))
            .and_then(fact)
            .map(|url| availability(&url)),
        rating: product
            .get("aggregateRating")
            .and_then(Value::as_object)
            .and_then(rating),
        sku: product.get("sku").and_then(fact),
        specs: product
            .get("additionalProperty")
            .map(specs)
            .unwrap_or_default(),
        description: product
            .get("description")
            .and_then(text)
            .map(|d| clip(&d, MAX_DESCRIPTION))
            .filter(|d| !d.is_empty()),
    }
}

/// The first object of a value that is an object or a list of them.
fn first_object(value: &Value) -> Option<&Map<String, Value>> {
    match value {
        Value::Object(object) => Some(object),
        Value::Array(items) => items.iter().find_map(Value::as_object),
        _ => None,
    }
}

/// An offer's amount (a range for an `AggregateOffer`) and currency.
fn price_of(offer: &Map<String, Value>) -> (Option<String>, Option<String>) {
    let spec = offer.get("priceSpecification").and_then(first_object);
    let field = |name: &str| {
        offer
            .get(name)
            .or_else(|| spec.and_then(|spec| spec.get(name)))
            .and_then(fact)
    };
    let price = field("price").or_else(|| match (field("lowPrice"), field("highPrice")) {
        (Some(low), Some(high)) if low != high => Some(format!("{low} to {high}")),
        (Some(low), _) => Some(low),
        (None, high) => high,
    });
    (price, field("priceCurrency"))
}

/// `https://schema.org/InStock` as `in stock`.
fn availability(url: &str) -> String {
    let name = url.rsplit('/').next().unwrap_or(url);
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            out.push(' ');
        }
        out.extend(c.to_lowercase());
    }
    out
}

/// `4.6 out of 5 (120 reviews)`.
fn rating(rating: &Map<String, Value>) -> Option<String> {
    let value = rating.get("ratingValue").and_then(fact)?;
    let mut out = value;
    if let Some(best) = rating.get("bestRating").and_then(fact) {
        out.push_str(&format!(" out of {best}"));
    }
    let count = rating
        .get("reviewCount")
        .or_else(|| rating.get("ratingCount"))
        .and_then(fact);
    if let Some(count) = count {
        out.push_str(&format!(" ({count} reviews)"));
    }
    Some(out)
}

fn specs(value: &Value) -> Vec<(String, String)> {
    let items: Vec<&Value> = match value {
        Value::Array(items) => items.iter().collect(),
        other => vec![other],
    };
    items
        .into_iter()
        .filter_map(Value::as_object)
        .filter_map(|property| {
            let name = property.get("name").and_then(fact)?;
            let value = property.get("value").and_then(fact)?;
            Some((name, value))
        })
        .take(MAX_SPECS)
        .collect()
}

/// A string or number as plain text; `None` when empty.
fn text(value: &Value) -> Option<String> {
    let text = match value {
        Value::String(text) => plain_text(text),
        Value::Number(number) => number.to_string(),
        _ => return None,
    };
    Some(text).filter(|text| !text.is_empty())
}

/// [`text`], clipped to a fact's length.
fn fact(value: &Value) -> Option<String> {
    text(value).map(|text| clip(&text, MAX_VALUE))
}

/// A string, or the `name` of an object (`"brand": {"@type": "Brand", "name": ..}`).
fn named_text(value: &Value) -> Option<String> {
    match value {
        Value::Object(object) => object.get("name").and_then(fact),
        Value::Array(items) => items.first().and_then(named_text),
        other => fact(other),
    }
}

/// The text a browser shows for `html`: tags dropped, character references
/// decoded (`&amp;`), whitespace collapsed. JSON-LD strings are often HTML.
fn plain_text(html: &str) -> String {
    if !html.contains(['<', '&']) {
        return html.split_whitespace().collect::<Vec<_>>().join(" ");
    }
    let doc = dom::parse(html, dom::Scripting::On);
    root::normalized_text(doc.tree.root())
}

/// At most `max` characters of `text`, cut at a word boundary with `…`.
fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let cut: String = text.chars().take(max).collect();
    let cut = cut.rsplit_once(' ').map_or(cut.as_str(), |(head, _)| head);
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = r#"<html><head>
        <script type="application/ld+json">{"@context":"https://schema.org","@type":"BreadcrumbList"}</script>
        <script type="application/ld+json">{"@graph":[{"@type":"WebPage"},
          {"@type":["Product"],"name":"Trail Shoe  X &amp; Co","brand":{"@type":"Brand","name":"Acme"},
           "sku":"TS-9","description":"<p>Light <b>and</b> grippy.</p>",
           "offers":[{"@type":"Offer","price":"89.00","priceCurrency":"EUR",
                      "availability":"https://schema.org/InStock"}],
           "aggregateRating":{"ratingValue":4.6,"bestRating":5,"reviewCount":"120"},
           "additionalProperty":[{"name":"Weight","value":"280 g"}]}]}</script>
        </head><body></body></html>"#;

    #[test]
    fn reads_a_product_anywhere_in_any_block() {
        let facts = facts(PAGE).expect("a product");
        assert_eq!(facts.name.as_deref(), Some("Trail Shoe X & Co"));
        assert_eq!(facts.brand.as_deref(), Some("Acme"));
        assert_eq!(facts.price.as_deref(), Some("89.00"));
        assert_eq!(facts.currency.as_deref(), Some("EUR"));
        assert_eq!(facts.availability.as_deref(), Some("in stock"));
        assert_eq!(facts.rating.as_deref(), Some("4.6 out of 5 (120 reviews)"));
        assert_eq!(facts.specs, [("Weight".to_owned(), "280 g".to_owned())]);
        assert_eq!(facts.description.as_deref(), Some("Light and grippy."));
    }

    #[test]
    fn only_what_the_page_does_not_show_is_added_under_its_source() {
        let facts = facts(PAGE).expect("a product");
        let shown = "# Trail Shoe X & Co\n\nBy **Acme**. €89 — In stock. SKU TS-9\n\nWeight 280 g";
        assert_eq!(
            supplement(shown, &facts).as_deref(),
            Some(
                "Product facts from the page's structured data (JSON-LD):\n\n\
                 - Rating: 4.6 out of 5 (120 reviews)\n\nLight and grippy."
            )
        );
        let all = format!("{shown}\n\nRated 4.6 out of 5. Light and grippy.");
        assert_eq!(supplement(&all, &facts), None);
        // 189.00 is not 89.00.
        let other_price =
            "Trail Shoe X & Co by Acme, €189, in stock, TS-9, 280 g, rated 4.6. Light and grippy.";
        assert_eq!(
            supplement(other_price, &facts).as_deref(),
            Some("Product facts from the page's structured data (JSON-LD):\n\n- Price: 89.00 EUR")
        );
    }

    #[test]
    fn aggregate_offers_and_broken_blocks() {
        let html = r#"<script type="application/ld+json">{"@type":"Product",</script>
            <script type='application/ld+json'>{"@type":"Product","name":"Kit",
              "offers":{"@type":"AggregateOffer","lowPrice":10,"highPrice":"25.5",
                        "priceCurrency":"USD"}}</script>"#;
        let facts = facts(html).expect("the second block");
        assert_eq!(facts.price.as_deref(), Some("10 to 25.5"));
        assert_eq!(facts.currency.as_deref(), Some("USD"));
        assert_eq!(super::facts("<p>no structured data</p>"), None);
        assert_eq!(
            super::facts(
                "<script type=application/ld+json>[[[[[[[[[[{\"@type\":\"Product\"}]]]]]]]]]]</script>"
            ),
            None
        );
    }

    #[test]
    fn clips_long_values_at_a_word() {
        let long = "word ".repeat(1_000);
        let clipped = clip(long.trim(), 20);
        assert_eq!(clipped, "word word word word…");
    }
}
