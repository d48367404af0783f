//! The module layers hold (ARCHITECTURE.md, "Layers"): each top-level module of
//! `src/` imports only modules of its own layer or a lower one, and no two
//! top-level modules depend on each other, however indirectly.
//!
//! The check reads the crate as Rust (`syn`): from `src/lib.rs` it follows every
//! `mod` declaration, and in each module collects the crate paths it names: `use`
//! trees, paths in code and types, and `crate::` paths inside macro bodies.
//! `crate::x`, `super::…` and `self::…` are resolved to the top-level module they
//! reach (an item `lib.rs` re-exports counts as its defining module). Code under
//! `#[cfg(test)]` is checked apart: it may also reach `testing`, the test doubles
//! (which import the modules they stand in for), and is left out of the cycle
//! check for that reason.
//!
//! `cargo test --test layers -- --nocapture` prints the graph.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::{self, Visit};

/// The layers, top to bottom (ARCHITECTURE.md, "Layers", says the rule of
/// each). A module may import modules of its own layer and of the layers below
/// it, never one above; a new top-level module must be placed here.
const LAYERS: &[(&str, &[&str])] = &[
    ("reach past the API", &["internals", "testing"]),
    ("front doors", &["mcp", "serve"]),
    ("the tool", &["tool", "batch"]),
    ("adapters", &["fleet"]),
    ("stages", &["offline", "page", "render", "robots", "cache"]),
    ("the network edge", &["transport", "politeness", "ssrf"]),
    (
        "readers",
        &["content", "extract", "chunk", "tokens", "output"],
    ),
    (
        "a call's values",
        &["args", "executor", "pass", "budget", "notes", "progress"],
    ),
    ("configuration", &["config"]),
    (
        "ground",
        &["vocabulary", "canonical_url", "error", "bot_auth"],
    ),
];

/// One module file reached from `src/lib.rs`.
struct ModuleFile {
    /// Its module path (`["extract", "auto"]` for `src/extract/auto.rs`).
    path: Vec<String>,
    file: PathBuf,
    /// Declared under `#[cfg(test)]` (the file and everything in it is test code).
    test_only: bool,
}

/// A crate path one module names: the top-level module it reaches, and where.
#[derive(Debug, Clone)]
struct Edge {
    to: String,
    test: bool,
    file: PathBuf,
    path: String,
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn parse(file: &Path) -> syn::File {
    let text = fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
}

/// Whether `attrs` put an item under `#[cfg(test)]` (or `cfg(all(test, …))`).
fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|attr| {
        attr.path().is_ident("cfg")
            && attr.meta.require_list().is_ok_and(|list| {
                let tokens = list.tokens.to_string();
                tokens == "test" || (tokens.starts_with("all") && has_ident(&list.tokens, "test"))
            })
    })
}

fn has_ident(tokens: &TokenStream, name: &str) -> bool {
    tokens.clone().into_iter().any(|tree| match tree {
        TokenTree::Ident(ident) => ident == name,
        TokenTree::Group(group) => has_ident(&group.stream(), name),
        _ => false,
    })
}

fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    match item {
        syn::Item::Const(i) => &i.attrs,
        syn::Item::Enum(i) => &i.attrs,
        syn::Item::ExternCrate(i) => &i.attrs,
        syn::Item::Fn(i) => &i.attrs,
        syn::Item::ForeignMod(i) => &i.attrs,
        syn::Item::Impl(i) => &i.attrs,
        syn::Item::Macro(i) => &i.attrs,
        syn::Item::Mod(i) => &i.attrs,
        syn::Item::Static(i) => &i.attrs,
        syn::Item::Struct(i) => &i.attrs,
        syn::Item::Trait(i) => &i.attrs,
        syn::Item::TraitAlias(i) => &i.attrs,
        syn::Item::Type(i) => &i.attrs,
        syn::Item::Union(i) => &i.attrs,
        syn::Item::Use(i) => &i.attrs,
        _ => &[],
    }
}

fn impl_item_attrs(item: &syn::ImplItem) -> &[syn::Attribute] {
    match item {
        syn::ImplItem::Const(i) => &i.attrs,
        syn::ImplItem::Fn(i) => &i.attrs,
        syn::ImplItem::Type(i) => &i.attrs,
        syn::ImplItem::Macro(i) => &i.attrs,
        _ => &[],
    }
}

/// Walks one file: the crate paths it names and the module files it declares.
struct Collector<'a> {
    /// The module the visitor is in, inline modules included.
    here: Vec<String>,
    /// Above zero inside `#[cfg(test)]` code.
    test_depth: usize,
    file: &'a Path,
    /// Top-level module names.
    tops: &'a BTreeSet<String>,
    /// Names `lib.rs` re-exports, to the module that defines them.
    root_items: &'a BTreeMap<String, String>,
    edges: Vec<Edge>,
    children: Vec<(Vec<String>, bool)>,
}

impl Collector<'_> {
    /// The top-level module a path that starts with `segments` reaches, if it is
    /// a crate path.
    fn resolve(&self, segments: &[String]) -> Option<String> {
        let (first, rest) = segments.split_first()?;
        let base: &[String] = match first.as_str() {
            "crate" => &[],
            "self" => &self.here,
            "super" => {
                let ups = 1 + rest.iter().take_while(|s| *s == "super").count();
                let rest = &rest[ups - 1..];
                let base = &self.here[..self.here.len().saturating_sub(ups)];
                return self.reached_from(base, rest);
            }
            _ => return None,
        };
        self.reached_from(base, rest)
    }

    fn reached_from(&self, base: &[String], rest: &[String]) -> Option<String> {
        if let Some(top) = base.first() {
            return Some(top.clone());
        }
        let name = rest.first()?;
        if self.tops.contains(name) {
            Some(name.clone())
        } else {
            self.root_items.get(name).cloned()
        }
    }

    fn record(&mut self, segments: &[String]) {
        if let Some(to) = self.resolve(segments) {
            self.edges.push(Edge {
                to,
                test: self.test_depth > 0,
                file: self.file.to_path_buf(),
                path: segments.join("::"),
            });
        }
    }

    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                prefix.push(n.ident.to_string());
                self.record(prefix);
                prefix.pop();
            }
            syn::UseTree::Rename(r) => {
                prefix.push(r.ident.to_string());
                self.record(prefix);
                prefix.pop();
            }
            syn::UseTree::Glob(_) => {
                prefix.push("*".to_owned());
                self.record(prefix);
                prefix.pop();
            }
            syn::UseTree::Group(g) => {
                for tree in &g.items {
                    self.use_tree(prefix, tree);
                }
            }
        }
    }

    /// `crate::a::…` inside a macro body (`matches!`, `format!`, `tokio::select!`).
    fn macro_tokens(&mut self, tokens: &TokenStream) {
        let trees: Vec<TokenTree> = tokens.clone().into_iter().collect();
        for (i, tree) in trees.iter().enumerate() {
            match tree {
                TokenTree::Group(group) => self.macro_tokens(&group.stream()),
                TokenTree::Ident(ident) if ident == "crate" => {
                    if let [
                        TokenTree::Punct(a),
                        TokenTree::Punct(b),
                        TokenTree::Ident(next),
                        ..,
                    ] = &trees[i + 1..]
                        && a.as_char() == ':'
                        && b.as_char() == ':'
                    {
                        self.record(&["crate".to_owned(), next.to_string()]);
                    }
                }
                _ => {}
            }
        }
    }
}

impl<'ast> Visit<'ast> for Collector<'_> {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let test = is_test(item_attrs(item));
        self.test_depth += usize::from(test);
        visit::visit_item(self, item);
        self.test_depth -= usize::from(test);
    }

    fn visit_impl_item(&mut self, item: &'ast syn::ImplItem) {
        let test = is_test(impl_item_attrs(item));
        self.test_depth += usize::from(test);
        visit::visit_impl_item(self, item);
        self.test_depth -= usize::from(test);
    }

    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        let name = item.ident.to_string();
        match &item.content {
            Some((_, items)) => {
                self.here.push(name);
                for item in items {
                    self.visit_item(item);
                }
                self.here.pop();
            }
            None => {
                let mut path = self.here.clone();
                path.push(name);
                self.children.push((path, self.test_depth > 0));
            }
        }
    }

    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        self.use_tree(&mut Vec::new(), &item.tree);
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        self.record(&segments);
        visit::visit_path(self, path);
    }

    // `pub(in crate::x)` names an ancestor, not a dependency.
    fn visit_visibility(&mut self, _: &'ast syn::Visibility) {}

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.macro_tokens(&mac.tokens);
        visit::visit_macro(self, mac);
    }
}

/// The file of module `path` (`src/a/b.rs` or `src/a/b/mod.rs`).
fn module_file(path: &[String]) -> PathBuf {
    let mut file = src();
    for segment in path {
        file.push(segment);
    }
    let flat = file.with_extension("rs");
    if flat.exists() {
        flat
    } else {
        file.join("mod.rs")
    }
}

/// `lib.rs`'s re-exports (`pub use self::m::Name`): each name to its module.
fn root_items(lib: &syn::File) -> BTreeMap<String, String> {
    fn walk(prefix: &mut Vec<String>, tree: &syn::UseTree, out: &mut BTreeMap<String, String>) {
        let mut leaf = |name: String, prefix: &[String]| {
            if let [first, module, ..] = prefix
                && first == "self"
            {
                out.insert(name, module.clone());
            }
        };
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                walk(prefix, &p.tree, out);
                prefix.pop();
            }
            syn::UseTree::Name(n) => leaf(n.ident.to_string(), prefix),
            syn::UseTree::Rename(r) => leaf(r.rename.to_string(), prefix),
            syn::UseTree::Glob(_) => {}
            syn::UseTree::Group(g) => {
                for tree in &g.items {
                    walk(prefix, tree, out);
                }
            }
        }
    }
    let mut out = BTreeMap::new();
    for item in &lib.items {
        if let syn::Item::Use(item) = item {
            walk(&mut Vec::new(), &item.tree, &mut out);
        }
    }
    out
}

/// Every module file of the crate and every crate path each names.
fn read_crate() -> (BTreeSet<String>, Vec<ModuleFile>, Vec<Edge>) {
    let lib_file = src().join("lib.rs");
    let lib = parse(&lib_file);
    let tops: BTreeSet<String> = lib
        .items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Mod(m) if m.content.is_none() => Some(m.ident.to_string()),
            _ => None,
        })
        .collect();
    let roots = root_items(&lib);
    let mut files = Vec::new();
    let mut edges = Vec::new();
    let mut queue = vec![ModuleFile {
        path: Vec::new(),
        file: lib_file,
        test_only: false,
    }];
    while let Some(module) = queue.pop() {
        let ast = parse(&module.file);
        let mut collector = Collector {
            here: module.path.clone(),
            test_depth: usize::from(module.test_only),
            file: &module.file,
            tops: &tops,
            root_items: &roots,
            edges: Vec::new(),
            children: Vec::new(),
        };
        collector.visit_file(&ast);
        let (children, found) = (collector.children, collector.edges);
        if let Some(top) = module.path.first() {
            edges.extend(found.into_iter().filter(|e| &e.to != top).map(|e| Edge {
                path: format!("{top} -> {}", e.path),
                ..e
            }));
        }
        for (path, test) in children {
            let file = module_file(&path);
            queue.push(ModuleFile {
                path,
                file,
                test_only: module.test_only || test,
            });
        }
        files.push(module);
    }
    (tops, files, edges)
}

fn from_of(edge: &Edge) -> &str {
    edge.path.split(" -> ").next().unwrap_or_default()
}

/// The top-level module graph: each module to the modules it imports.
fn graph(edges: &[Edge], test: bool) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for edge in edges.iter().filter(|e| e.test == test) {
        out.entry(from_of(edge).to_owned())
            .or_default()
            .insert(edge.to.clone());
    }
    out
}

/// The strongly connected components of more than one module (Tarjan).
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'a> {
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn connect<'a>(s: &mut State<'a>, v: &'a str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in s.graph.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                connect(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.push(w.to_owned());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.out.push(component);
            }
        }
    }
    let mut state = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !state.index.contains_key(v.as_str()) {
            connect(&mut state, v);
        }
    }
    state.out
}

fn layer_of(module: &str) -> Option<usize> {
    LAYERS
        .iter()
        .position(|(_, modules)| modules.contains(&module))
}

fn print(title: &str, graph: &BTreeMap<String, BTreeSet<String>>) {
    println!("{title}");
    for (from, to) in graph {
        let to: Vec<&str> = to.iter().map(String::as_str).collect();
        println!("  {from} -> {}", to.join(", "));
    }
}

#[test]
fn every_top_level_module_has_a_layer() {
    let (tops, _, _) = read_crate();
    let missing: Vec<&String> = tops.iter().filter(|m| layer_of(m).is_none()).collect();
    assert!(
        missing.is_empty(),
        "modules with no layer in tests/layers.rs: {missing:?}"
    );
    let gone: Vec<&str> = LAYERS
        .iter()
        .flat_map(|(_, modules)| modules.iter().copied())
        .filter(|m| !tops.contains(*m))
        .collect();
    assert!(
        gone.is_empty(),
        "layers name modules src/lib.rs does not declare: {gone:?}"
    );
}

#[test]
fn no_cycle_between_top_level_modules() {
    let (_, files, edges) = read_crate();
    assert!(files.len() > 100, "read only {} module files", files.len());
    let code = graph(&edges, false);
    print("top-level module imports (non-test code):", &code);
    let found = cycles(&code);
    println!("cycles: {found:?}");
    assert!(
        found.is_empty(),
        "cycles between top-level modules: {found:?}"
    );
}

#[test]
fn no_module_imports_a_higher_layer() {
    let (_, _, edges) = read_crate();
    let testing = layer_of("testing");
    let upward: Vec<String> = edges
        .iter()
        .filter(|e| {
            let (Some(from), Some(to)) = (layer_of(from_of(e)), layer_of(&e.to)) else {
                return false;
            };
            to < from && !(e.test && Some(to) == testing)
        })
        .map(|e| {
            format!(
                "{}: {}{}",
                e.file.display(),
                e.path,
                if e.test { " (test)" } else { "" }
            )
        })
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    print("test code imports:", &graph(&edges, true));
    assert!(
        upward.is_empty(),
        "imports of a higher layer:\n{}",
        upward.join("\n")
    );
}
