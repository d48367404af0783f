//! The public API, as a snapshot: a change to what an embedder can name is a
//! visible diff of `tests/api.txt`.
//!
//! The check reads the crate as Rust (`syn`), so it runs on stable (the rustdoc
//! JSON `cargo public-api` needs is nightly only). From `src/lib.rs` it follows
//! `pub mod` declarations and `pub use` re-exports to every item at a public path,
//! and lists each with its signature, its public fields, variants and methods,
//! and the traits it implements or derives. Items under `#[cfg(test)]`,
//! `#[cfg(feature = "internals")]` or `#[doc(hidden)]` (`internals`, `testing`)
//! are not API and are left out.
//!
//! `UPDATE_API=1 cargo test --test api` rewrites the snapshot.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use quote::ToTokens;
use syn::{Attribute, ImplItem, Item, TraitItem, UseTree, Visibility};

const HEADER: &str = "\
# The public API of the webfetch library (tests/api.rs; `UPDATE_API=1 cargo test --test api`
# rewrites it). Not listed: `internals` and `testing`, which exist only under the
# `internals` feature for this crate's own tests, benches and fuzz targets.
";

/// Every module of the crate, by path (`["serve"]`), with its items.
type Modules = BTreeMap<Vec<String>, Vec<Item>>;

fn is_hidden(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|a| {
        let text = a.to_token_stream().to_string();
        (a.path().is_ident("cfg") && (text.contains("test") || text.contains("internals")))
            || (a.path().is_ident("doc") && text.contains("hidden"))
    })
}

fn is_pub(vis: &Visibility) -> bool {
    matches!(vis, Visibility::Public(_))
}

/// Token text with the spaces `to_string` puts around punctuation taken out.
fn text(tokens: &impl ToTokens) -> String {
    let mut s = tokens.to_token_stream().to_string();
    for (from, to) in [
        (" :: ", "::"),
        (":: ", "::"),
        (" (", "("),
        ("( ", "("),
        (" )", ")"),
        (" ,", ","),
        ("& ", "&"),
        (" <", "<"),
        ("< ", "<"),
        (" >", ">"),
        (" :", ":"),
        ("' ", "'"),
        (" ;", ";"),
        ("[ ", "["),
        (" ]", "]"),
    ] {
        s = s.replace(from, to);
    }
    s.replace("->", " -> ").replace("  ", " ")
}

/// A signature past its name: generics, arguments and return type, with
/// `async` moved to the end.
fn signature(sig: &syn::Signature) -> String {
    let full = text(sig);
    let name = format!("fn {}", sig.ident);
    let tail = full.split_once(&name).map_or(full.as_str(), |(_, t)| t);
    let suffix = if sig.asyncness.is_some() {
        " (async)"
    } else {
        ""
    };
    format!("{tail}{suffix}")
}

fn module_file(src: &Path, path: &[String]) -> PathBuf {
    let base = path.iter().fold(src.to_path_buf(), |p, s| p.join(s));
    let flat = base.with_extension("rs");
    if flat.exists() {
        flat
    } else {
        base.join("mod.rs")
    }
}

/// Reads the crate's modules from `src/lib.rs`, file and inline ones alike.
fn load(src: &Path, path: Vec<String>, items: Vec<Item>, modules: &mut Modules) {
    for item in &items {
        if let Item::Mod(m) = item {
            if is_hidden(&m.attrs) {
                continue;
            }
            let mut child = path.clone();
            child.push(m.ident.to_string());
            let items = match &m.content {
                Some((_, items)) => items.clone(),
                None => {
                    let file = module_file(src, &child);
                    let code =
                        fs::read_to_string(&file).unwrap_or_else(|e| panic!("{file:?}: {e}"));
                    syn::parse_file(&code).expect("the crate parses").items
                }
            };
            load(src, child, items, modules);
        }
    }
    modules.insert(path, items);
}

/// The declaration `name` refers to in module `module`, following `use`s:
/// the defining module and the item.
fn resolve(modules: &Modules, module: &[String], name: &str) -> Option<(Vec<String>, Item)> {
    for item in modules.get(module)? {
        if item_name(item).as_deref() == Some(name) {
            return Some((module.to_vec(), item.clone()));
        }
        if let Item::Use(u) = item {
            let mut leaves = Vec::new();
            use_leaves(&u.tree, Vec::new(), &mut leaves);
            for (target, alias) in leaves {
                if alias == name {
                    let (at, last) = walk(modules, module, &target)?;
                    return resolve(modules, &at, &last);
                }
            }
        }
    }
    None
}

/// Splits a `use` path into the module it starts from and the last segment;
/// `None` for a path into another crate.
fn walk(modules: &Modules, module: &[String], target: &[String]) -> Option<(Vec<String>, String)> {
    let (last, dirs) = target.split_last()?;
    let mut at = module.to_vec();
    for (i, seg) in dirs.iter().enumerate() {
        match seg.as_str() {
            "crate" if i == 0 => at.clear(),
            "self" => {}
            "super" => {
                at.pop();
            }
            other => {
                at.push(other.to_owned());
                if !modules.contains_key(&at) {
                    return None;
                }
            }
        }
    }
    Some((at, last.clone()))
}

/// Each name a `use` tree brings in: its full path and the name it takes.
fn use_leaves(tree: &UseTree, prefix: Vec<String>, out: &mut Vec<(Vec<String>, String)>) {
    let with = |s: String| prefix.iter().cloned().chain([s]).collect::<Vec<_>>();
    match tree {
        UseTree::Path(p) => use_leaves(&p.tree, with(p.ident.to_string()), out),
        UseTree::Name(n) => out.push((with(n.ident.to_string()), n.ident.to_string())),
        UseTree::Rename(r) => out.push((with(r.ident.to_string()), r.rename.to_string())),
        UseTree::Group(g) => g
            .items
            .iter()
            .for_each(|t| use_leaves(t, prefix.clone(), out)),
        UseTree::Glob(_) => panic!("a glob re-export cannot be listed: name the items"),
    }
}

fn item_name(item: &Item) -> Option<String> {
    Some(match item {
        Item::Struct(i) => i.ident.to_string(),
        Item::Enum(i) => i.ident.to_string(),
        Item::Fn(i) => i.sig.ident.to_string(),
        Item::Trait(i) => i.ident.to_string(),
        Item::Const(i) => i.ident.to_string(),
        Item::Static(i) => i.ident.to_string(),
        Item::Type(i) => i.ident.to_string(),
        Item::Mod(i) => i.ident.to_string(),
        _ => return None,
    })
}

/// The attributes that are part of a type's contract: derives and `non_exhaustive`.
fn contract_attrs(attrs: &[Attribute], path: &str, out: &mut BTreeSet<String>) {
    for a in attrs {
        if a.path().is_ident("non_exhaustive") {
            out.insert(format!("#[non_exhaustive] {path}"));
        } else if a.path().is_ident("derive") {
            let _ = a.parse_nested_meta(|m| {
                out.insert(format!("impl {}: {}", path, text(&m.path)));
                Ok(())
            });
        }
    }
}

/// Lists the public items of `module`, named under `public` (its public path).
fn list_module(modules: &Modules, module: &[String], public: &str, out: &mut Api) {
    for item in &modules[module] {
        match item {
            Item::Use(u) if is_pub(&u.vis) && !is_hidden(&u.attrs) => {
                let mut leaves = Vec::new();
                use_leaves(&u.tree, Vec::new(), &mut leaves);
                for (target, alias) in leaves {
                    let path = format!("{public}::{alias}");
                    match walk(modules, module, &target)
                        .and_then(|(at, last)| resolve(modules, &at, &last))
                    {
                        Some((at, item)) => list_item(modules, &at, &item, &path, out),
                        None => {
                            out.lines
                                .insert(format!("pub use {path} = {}", target.join("::")));
                        }
                    }
                }
            }
            _ => list_item(
                modules,
                module,
                item,
                &format!("{public}::{}", item_name(item).unwrap_or_default()),
                out,
            ),
        }
    }
}

/// What the snapshot collects: its lines, and the public types by name, whose
/// impls are read in a second pass.
#[derive(Default)]
struct Api {
    lines: BTreeSet<String>,
    types: BTreeMap<String, String>,
}

fn list_item(modules: &Modules, module: &[String], item: &Item, path: &str, out: &mut Api) {
    let lines = &mut out.lines;
    match item {
        Item::Mod(m) if is_pub(&m.vis) && !is_hidden(&m.attrs) => {
            lines.insert(format!("mod {path}"));
            let mut child = module.to_vec();
            child.push(m.ident.to_string());
            list_module(modules, &child, path, out);
        }
        Item::Struct(s) if is_pub(&s.vis) && !is_hidden(&s.attrs) => {
            lines.insert(format!("struct {path}{}", text(&s.generics)));
            contract_attrs(&s.attrs, path, lines);
            for (i, f) in s.fields.iter().enumerate().filter(|(_, f)| is_pub(&f.vis)) {
                let name = f.ident.as_ref().map_or(i.to_string(), ToString::to_string);
                lines.insert(format!("field {path}.{name}: {}", text(&f.ty)));
            }
            out.types.insert(s.ident.to_string(), path.to_owned());
        }
        Item::Enum(e) if is_pub(&e.vis) && !is_hidden(&e.attrs) => {
            lines.insert(format!("enum {path}{}", text(&e.generics)));
            contract_attrs(&e.attrs, path, lines);
            for v in &e.variants {
                lines.insert(format!("variant {path}::{}{}", v.ident, text(&v.fields)));
            }
            out.types.insert(e.ident.to_string(), path.to_owned());
        }
        Item::Trait(t) if is_pub(&t.vis) && !is_hidden(&t.attrs) => {
            lines.insert(format!("trait {path}{}", text(&t.generics)));
            for i in &t.items {
                if let TraitItem::Fn(f) = i {
                    lines.insert(format!("fn {path}::{}{}", f.sig.ident, signature(&f.sig)));
                }
            }
            out.types.insert(t.ident.to_string(), path.to_owned());
        }
        Item::Fn(f) if is_pub(&f.vis) && !is_hidden(&f.attrs) => {
            lines.insert(format!("fn {path}{}", signature(&f.sig)));
        }
        Item::Const(c) if is_pub(&c.vis) && !is_hidden(&c.attrs) => {
            lines.insert(format!("const {path}: {}", text(&c.ty)));
        }
        Item::Static(s) if is_pub(&s.vis) && !is_hidden(&s.attrs) => {
            lines.insert(format!("static {path}: {}", text(&s.ty)));
        }
        Item::Type(t) if is_pub(&t.vis) && !is_hidden(&t.attrs) => {
            lines.insert(format!(
                "type {path}{} = {}",
                text(&t.generics),
                text(&t.ty)
            ));
        }
        _ => {}
    }
}

/// Adds the public methods and trait impls of the listed types, wherever in the
/// crate their `impl` blocks are.
fn list_impls(modules: &Modules, out: &mut Api) {
    for items in modules.values() {
        for item in items {
            let Item::Impl(imp) = item else { continue };
            if is_hidden(&imp.attrs) {
                continue;
            }
            let syn::Type::Path(ty) = &*imp.self_ty else {
                continue;
            };
            let name = ty
                .path
                .segments
                .last()
                .expect("a type path")
                .ident
                .to_string();
            let Some(path) = out.types.get(&name) else {
                continue;
            };
            if let Some((_, trait_path, _)) = &imp.trait_ {
                out.lines
                    .insert(format!("impl {path}: {}", text(trait_path)));
                continue;
            }
            for i in &imp.items {
                match i {
                    ImplItem::Fn(f) if is_pub(&f.vis) && !is_hidden(&f.attrs) => {
                        let name = &f.sig.ident;
                        out.lines
                            .insert(format!("fn {path}::{name}{}", signature(&f.sig)));
                    }
                    ImplItem::Const(c) if is_pub(&c.vis) => {
                        out.lines
                            .insert(format!("const {path}::{}: {}", c.ident, text(&c.ty)));
                    }
                    _ => {}
                }
            }
        }
    }
}

#[test]
fn the_public_api_matches_the_snapshot() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = root.join("src");
    let lib = syn::parse_file(&fs::read_to_string(src.join("lib.rs")).unwrap()).unwrap();
    let mut modules = Modules::new();
    load(&src, Vec::new(), lib.items, &mut modules);
    let mut api = Api::default();
    list_module(&modules, &[], "webfetch", &mut api);
    list_impls(&modules, &mut api);
    let listed = api.lines.into_iter().collect::<Vec<_>>().join("\n");
    let snapshot = format!("{HEADER}{listed}\n");
    let file = root.join("tests/api.txt");
    if std::env::var_os("UPDATE_API").is_some() {
        fs::write(&file, &snapshot).unwrap();
        return;
    }
    let committed = fs::read_to_string(&file).unwrap_or_default();
    assert!(
        committed == snapshot,
        "the public API changed; review, then `UPDATE_API=1 cargo test --test api`:\n{}",
        diff(&committed, &snapshot)
    );
}

/// The lines only one side has, `-` committed and `+` current.
fn diff(old: &str, new: &str) -> String {
    let old: BTreeSet<&str> = old.lines().collect();
    let new: BTreeSet<&str> = new.lines().collect();
    let gone = old.difference(&new).map(|l| format!("- {l}"));
    let came = new.difference(&old).map(|l| format!("+ {l}"));
    gone.chain(came).collect::<Vec<_>>().join("\n")
}
