//! The house rules of `src/`, checked on every test run so the structure stays as ARCHITECTURE.md
//! describes it:
//! - no import cycle between the top-level modules of the crate, nor between the files of one
//!   module;
//! - imports go one way, down the layers listed in [`LAYERS`];
//! - no function over [`MAX_FN_LINES`] lines (a file is as long as its idea: no count).
//!
//! Imports are read with `syn` from every `use` and every path in the code (`crate::x::y`,
//! `super::y`), so a fully qualified call counts as much as a `use`. Re-exports in a `mod.rs`
//! (`pub use info::Info`) are followed to the file that defines the item. Test modules are
//! skipped: they may reach anywhere.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::spanned::Spanned;
use syn::visit::Visit;

const MAX_FN_LINES: usize = 90;

/// Top-level modules from the bottom layer up. A module may import only modules of a lower
/// layer (or its own files). Data flows the other way: cli -> cmd -> workflow -> (planner,
/// agents) -> (llm, search) -> http, with plan and settings below.
const LAYERS: &[&[&str]] = &[
    &["text", "clock", "usage", "sync", "format"],
    &[
        "exit",
        "diagnostics",
        "cli",
        "atomic",
        "files",
        "in_corpus",
        "markdown",
        "lockfile",
        "web_providers",
        "embed",
        "isolate",
    ],
    &["logging", "plan", "settings", "output"],
    &["http", "prompts", "validate", "compare", "transcript"],
    &["llm", "search"],
    &["read"],
    &["run"],
    &["planner", "agents", "review"],
    &["events", "report", "eval", "view"],
    &["progress"],
    &["workflow", "offline", "thinkon"],
    &["batch"],
    &["session", "queue"],
    &["watch"],
    &["mcp"],
    &["cmd"],
];

/// Imports that the layers would allow but that would tie a general-purpose client to the
/// plan file: the HTTP, LLM and search clients know nothing of plans.
const FORBIDDEN: &[(&str, &str)] = &[("http", "plan"), ("llm", "plan"), ("search", "plan")];

/// One source file: its module path (`["plan", "info"]`) and parsed syntax.
struct SourceFile {
    rel: String,
    module: Vec<String>,
    is_mod_rs: bool,
    text: String,
    syntax: syn::File,
}

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn collect_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("read src/")
        .map(|e| e.expect("dir entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn load_sources() -> Vec<SourceFile> {
    let root = src_dir();
    let mut paths = Vec::new();
    collect_files(&root, &mut paths);
    paths
        .into_iter()
        .filter(|p| p.file_name().is_some_and(|n| n != "main.rs"))
        .map(|path| {
            let rel = path
                .strip_prefix(&root)
                .expect("under src/")
                .to_string_lossy()
                .replace('\\', "/");
            let text = std::fs::read_to_string(&path).expect("read source");
            let syntax = syn::parse_file(&text).unwrap_or_else(|e| panic!("parse {rel}: {e}"));
            let mut module: Vec<String> = rel
                .trim_end_matches(".rs")
                .split('/')
                .map(str::to_string)
                .collect();
            let is_mod_rs = module.last().is_some_and(|m| m == "mod");
            if is_mod_rs || module == ["lib"] {
                module.pop();
            }
            SourceFile {
                rel,
                module,
                is_mod_rs,
                text,
                syntax,
            }
        })
        .collect()
}

fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.meta
                .require_list()
                .is_ok_and(|l| l.tokens.to_string().split_whitespace().any(|t| t == "test"))
    })
}

/// Every crate-relative path a file names, as written (`crate`, `super`, `self` first).
#[derive(Default)]
struct PathCollector {
    paths: Vec<Vec<String>>,
}

impl PathCollector {
    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => self.push(prefix, Some(n.ident.to_string())),
            syn::UseTree::Rename(r) => self.push(prefix, Some(r.ident.to_string())),
            syn::UseTree::Glob(_) => self.push(prefix, None),
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.use_tree(prefix, t);
                }
            }
        }
    }

    fn push(&mut self, prefix: &[String], last: Option<String>) {
        let mut path = prefix.to_vec();
        path.extend(last.filter(|l| l != "self"));
        self.paths.push(path);
    }
}

impl<'ast> Visit<'ast> for PathCollector {
    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        self.use_tree(&mut Vec::new(), &item.tree);
    }

    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        if !is_cfg_test(&item.attrs) {
            syn::visit::visit_item_mod(self, item);
        }
    }

    fn visit_item_fn(&mut self, item: &'ast syn::ItemFn) {
        if !is_cfg_test(&item.attrs) {
            syn::visit::visit_item_fn(self, item);
        }
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        self.paths
            .push(path.segments.iter().map(|s| s.ident.to_string()).collect());
        syn::visit::visit_path(self, path);
    }
}

/// Resolves a path written in `file` to an absolute module path, or `None` for paths outside
/// the crate (`std::`, other crates, local names).
fn absolute(file: &SourceFile, path: &[String]) -> Option<Vec<String>> {
    let (first, rest) = path.split_first()?;
    let own = &file.module;
    let base: Vec<String> = match first.as_str() {
        "crate" => Vec::new(),
        "self" => own.clone(),
        "super" => own[..own.len().checked_sub(1)?].to_vec(),
        _ => return None,
    };
    let mut out = base;
    let mut rest = rest;
    while let Some((s, tail)) = rest.split_first() {
        if s != "super" {
            break;
        }
        out.pop();
        rest = tail;
    }
    out.extend(rest.iter().cloned());
    Some(out)
}

/// The module tree: which module paths are files or folders, and the re-exports of `mod.rs`
/// and `lib.rs` (`(["plan"], "Info") -> "info"`).
struct Tree {
    modules: BTreeSet<Vec<String>>,
    reexports: BTreeMap<(Vec<String>, String), String>,
}

impl Tree {
    fn new(files: &[SourceFile]) -> Tree {
        let modules = files.iter().map(|f| f.module.clone()).collect();
        let mut reexports = BTreeMap::new();
        for file in files.iter().filter(|f| f.is_mod_rs || f.module.is_empty()) {
            for item in &file.syntax.items {
                let syn::Item::Use(u) = item else { continue };
                if !matches!(u.vis, syn::Visibility::Public(_)) {
                    continue;
                }
                let mut c = PathCollector::default();
                c.use_tree(&mut Vec::new(), &u.tree);
                for p in c.paths {
                    let p: Vec<String> = match p.first().map(String::as_str) {
                        Some("self") => p[1..].to_vec(),
                        _ => p,
                    };
                    if let (Some(child), Some(name)) = (p.first(), p.last()) {
                        reexports.insert((file.module.clone(), name.clone()), child.clone());
                    }
                }
            }
        }
        Tree { modules, reexports }
    }

    /// The child of `parent` that `target` (an absolute path below `parent`) lives in.
    fn child_of(&self, parent: &[String], target: &[String]) -> Option<String> {
        let name = target.get(parent.len())?;
        let mut as_module = parent.to_vec();
        as_module.push(name.clone());
        if self.modules.contains(&as_module) {
            return Some(name.clone());
        }
        self.reexports
            .get(&(parent.to_vec(), name.clone()))
            .filter(|child| {
                let mut m = parent.to_vec();
                m.push((*child).clone());
                self.modules.contains(&m)
            })
            .cloned()
    }
}

/// Import edges between siblings: for each parent module, `from -> {to}` among its children.
fn sibling_edges(
    files: &[SourceFile],
) -> BTreeMap<Vec<String>, BTreeMap<String, BTreeSet<String>>> {
    let tree = Tree::new(files);
    let mut edges: BTreeMap<Vec<String>, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for file in files.iter().filter(|f| !f.module.is_empty()) {
        let mut c = PathCollector::default();
        c.visit_file(&file.syntax);
        // Every ancestor level: a file in plan/ is a child of the crate (as `plan`) and of
        // `plan` (as its own name).
        for depth in 0..file.module.len() {
            let parent = &file.module[..depth];
            let from = &file.module[depth];
            for path in &c.paths {
                let Some(target) = absolute(file, path) else {
                    continue;
                };
                if !target.starts_with(parent) {
                    continue;
                }
                let Some(to) = tree.child_of(parent, &target) else {
                    continue;
                };
                if &to != from {
                    edges
                        .entry(parent.to_vec())
                        .or_default()
                        .entry(from.clone())
                        .or_default()
                        .insert(to);
                }
            }
        }
    }
    edges
}

/// A cycle in the graph, as a list of nodes (first repeated last), if there is one.
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn dfs(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(node.to_string(), 1);
        stack.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            match state.get(next).copied().unwrap_or(0) {
                1 => {
                    let at = stack.iter().position(|s| s == next).unwrap_or(0);
                    let mut cycle = stack[at..].to_vec();
                    cycle.push(next.clone());
                    return Some(cycle);
                }
                0 => {
                    if let Some(c) = dfs(next, graph, state, stack) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(node.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for node in graph.keys() {
        if state.get(node).copied().unwrap_or(0) == 0 {
            let mut stack = Vec::new();
            if let Some(c) = dfs(node, graph, &mut state, &mut stack) {
                return Some(c);
            }
        }
    }
    None
}

#[test]
fn no_import_cycles_between_modules_or_files() {
    let files = load_sources();
    let edges = sibling_edges(&files);
    let cycles: Vec<String> = edges
        .iter()
        .filter_map(|(parent, graph)| {
            find_cycle(graph).map(|c| {
                let scope = if parent.is_empty() {
                    "crate".to_string()
                } else {
                    format!("crate::{}", parent.join("::"))
                };
                format!("{scope}: {}", c.join(" -> "))
            })
        })
        .collect();
    assert!(
        cycles.is_empty(),
        "import cycles in src/:\n{}",
        cycles.join("\n")
    );
}

#[test]
fn imports_go_down_the_layers() {
    let rank = |m: &str| LAYERS.iter().position(|layer| layer.contains(&m));
    let files = load_sources();
    let edges = sibling_edges(&files);
    let top = edges.get(&Vec::new()).cloned().unwrap_or_default();
    let mut wrong = Vec::new();
    for file in &files {
        if let Some(m) = file.module.first()
            && rank(m).is_none()
        {
            wrong.push(format!(
                "`{m}` ({}) is in no layer: add it to LAYERS and ARCHITECTURE.md",
                file.rel
            ));
        }
    }
    for (from, tos) in &top {
        for to in tos {
            if let (Some(a), Some(b)) = (rank(from), rank(to))
                && b >= a
            {
                wrong.push(format!(
                    "`{from}` imports `{to}`, which is not in a lower layer"
                ));
            }
            if FORBIDDEN.contains(&(from.as_str(), to.as_str())) {
                wrong.push(format!("`{from}` must not import `{to}`"));
            }
        }
    }
    wrong.sort();
    wrong.dedup();
    assert!(wrong.is_empty(), "layering:\n{}", wrong.join("\n"));
}

#[test]
fn functions_stay_short() {
    struct Lengths<'a> {
        file: &'a str,
        long: Vec<String>,
    }
    impl Lengths<'_> {
        fn check(&mut self, name: &syn::Ident, sig: proc_macro2::Span, body: &syn::Block) {
            let start = sig.start().line;
            let end = body.brace_token.span.close().end().line;
            let lines = end + 1 - start;
            if lines > MAX_FN_LINES {
                self.long
                    .push(format!("{}: fn {name} is {lines} lines", self.file));
            }
        }
    }
    impl<'ast> Visit<'ast> for Lengths<'_> {
        fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
            if !is_cfg_test(&item.attrs) {
                syn::visit::visit_item_mod(self, item);
            }
        }
        fn visit_item_fn(&mut self, item: &'ast syn::ItemFn) {
            if is_cfg_test(&item.attrs) {
                return;
            }
            self.check(&item.sig.ident, item.sig.span(), &item.block);
            syn::visit::visit_item_fn(self, item);
        }
        fn visit_impl_item_fn(&mut self, item: &'ast syn::ImplItemFn) {
            self.check(&item.sig.ident, item.sig.span(), &item.block);
            syn::visit::visit_impl_item_fn(self, item);
        }
    }

    let mut long = Vec::new();
    for file in load_sources() {
        let mut v = Lengths {
            file: &file.rel,
            long: Vec::new(),
        };
        v.visit_file(&file.syntax);
        long.extend(v.long);
    }
    assert!(
        long.is_empty(),
        "over {MAX_FN_LINES} lines a function:\n{}",
        long.join("\n")
    );
}

/// The checker itself must see what it is meant to catch.
#[test]
fn the_checker_finds_cycles_through_reexports() {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    graph.entry("a".into()).or_default().insert("b".into());
    graph.entry("b".into()).or_default().insert("c".into());
    assert_eq!(find_cycle(&graph), None);
    graph.entry("c".into()).or_default().insert("a".into());
    assert_eq!(
        find_cycle(&graph),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );

    let file = |module: &[&str], text: &str| SourceFile {
        rel: "x.rs".into(),
        module: module.iter().map(|s| s.to_string()).collect(),
        is_mod_rs: false,
        text: text.into(),
        syntax: syn::parse_file(text).expect("parses"),
    };
    let files = vec![
        file(
            &["plan", "info"],
            "use super::refs::Part; fn f() { crate::text::g(); }",
        ),
        file(
            &["plan", "refs"],
            "pub struct Part; fn h() { super::Info::parse(); }",
        ),
        SourceFile {
            is_mod_rs: true,
            ..file(&["plan"], "pub mod info; pub mod refs; pub use info::Info;")
        },
        file(&["text"], "pub fn g() {}"),
    ];
    let edges = sibling_edges(&files);
    let plan = &edges[&vec!["plan".to_string()]];
    assert!(plan["info"].contains("refs") && plan["refs"].contains("info"));
    assert!(find_cycle(plan).is_some());
    assert!(edges[&Vec::new()]["plan"].contains("text"));
}

/// ARCHITECTURE.md names only files and folders that exist, so a reader never looks for a
/// file that was renamed away.
#[test]
fn architecture_md_names_only_files_that_exist() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let mut names = BTreeSet::new();
    for piece in text.split('`').skip(1).step_by(2) {
        let piece = piece.trim();
        if piece.ends_with(".rs") || (piece.ends_with('/') && !piece.contains(' ')) {
            names.insert(piece.to_string());
        }
    }
    assert!(names.len() > 20, "the check reads the names: {names:?}");
    let mut all = Vec::new();
    collect_files(&root.join("src"), &mut all);
    collect_files(&root.join("tests"), &mut all);
    let rel: Vec<String> = all
        .iter()
        .map(|p| {
            p.strip_prefix(root)
                .expect("in repo")
                .to_string_lossy()
                .replace('\\', "/")
        })
        .collect();
    let missing: Vec<&String> = names
        .iter()
        .filter(|n| {
            !root.join(n.as_str()).exists()
                && !rel.iter().any(|r| {
                    if n.ends_with('/') {
                        r.starts_with(n.as_str())
                    } else {
                        r == *n || r.ends_with(&format!("/{n}"))
                    }
                })
        })
        .collect();
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md names missing files: {missing:?}"
    );
}

/// The drivers of one run stand side by side on the run layer: none imports another (Thinkon
/// writes its events through the run layer's log, not through the workflow), and each but the
/// offline engine (the workflow's planner and agents without a model) imports it. A batch
/// drives many runs from the floor above.
#[test]
fn the_drivers_are_siblings_on_the_run_layer() {
    let files = load_sources();
    let edges = sibling_edges(&files);
    let top = edges.get(&Vec::new()).cloned().unwrap_or_default();
    let drivers = ["workflow", "thinkon", "offline"];
    for from in drivers {
        let imports = top.get(from).cloned().unwrap_or_default();
        let others: Vec<&&str> = drivers
            .iter()
            .filter(|d| **d != from && imports.contains(**d))
            .collect();
        assert!(others.is_empty(), "`{from}` imports {others:?}");
        if from != "offline" {
            assert!(imports.contains("run"), "`{from}` stands on the run layer");
        }
    }
    let batch = top.get("batch").cloned().unwrap_or_default();
    assert!(batch.contains("run"), "`batch` stands on the run layer");
}

/// The run layer knows nothing of research: it names no module of the domain (nor the exit
/// codes of the commands: its errors are its own), so any driver can stand on it.
#[test]
fn the_run_layer_names_no_domain_module() {
    const DOMAIN: &[&str] = &[
        "agents", "planner", "review", "workflow", "thinkon", "batch", "offline", "validate",
        "eval", "view", "queue", "mcp", "report", "compare", "events", "research", "progress",
        "cmd", "exit",
    ];
    let files = load_sources();
    let edges = sibling_edges(&files);
    let top = edges.get(&Vec::new()).cloned().unwrap_or_default();
    let imports = top.get("run").cloned().unwrap_or_default();
    assert!(
        imports.contains("http") && imports.contains("llm"),
        "the check reads the run layer's imports: {imports:?}"
    );
    let named: Vec<&String> = imports
        .iter()
        .filter(|m| DOMAIN.contains(&m.as_str()))
        .collect();
    assert!(named.is_empty(), "the run layer names {named:?}");
}

/// Runs are wired in one place (`session`): a command parses, opens a session and renders,
/// and no command file but `doctor` (which probes each endpoint and search provider itself)
/// reaches the service modules directly.
#[test]
fn only_doctor_among_the_commands_reaches_the_service_modules() {
    const SERVICES: &[&str] = &["llm", "search", "http", "transcript", "prompts"];
    let files = load_sources();
    let mut reaching = BTreeMap::new();
    for file in files
        .iter()
        .filter(|f| f.module.first().is_some_and(|m| m == "cmd"))
    {
        let mut c = PathCollector::default();
        c.visit_file(&file.syntax);
        let named: BTreeSet<String> = c
            .paths
            .iter()
            .filter_map(|p| absolute(file, p))
            .filter_map(|p| p.first().cloned())
            .filter(|m| SERVICES.contains(&m.as_str()))
            .collect();
        if !named.is_empty() {
            reaching.insert(file.rel.clone(), named);
        }
    }
    assert!(
        reaching.contains_key("cmd/doctor/mod.rs"),
        "the check sees doctor's imports: {reaching:?}"
    );
    reaching.retain(|file, _| !file.starts_with("cmd/doctor/"));
    assert!(
        reaching.is_empty(),
        "command files reaching the services (open a `Session` instead): {reaching:?}"
    );
}

/// What commands share lives below them: no command module imports another.
#[test]
fn no_command_imports_another() {
    let files = load_sources();
    let edges = sibling_edges(&files);
    let cmd = edges
        .get(&vec!["cmd".to_string()])
        .cloned()
        .unwrap_or_default();
    let commands: Vec<String> = files
        .iter()
        .filter(|f| f.module.len() == 2 && f.module[0] == "cmd")
        .map(|f| f.module[1].clone())
        .collect();
    assert!(
        commands.len() >= 8,
        "the check sees the commands: {commands:?}"
    );
    let crossing: Vec<String> = cmd
        .iter()
        .flat_map(|(from, tos)| tos.iter().map(move |to| format!("cmd/{from}.rs -> {to}")))
        .collect();
    assert!(
        crossing.is_empty(),
        "commands importing commands: {crossing:?}"
    );
}

/// Each file of `src/` says what it is for in its own `//!` header, which ARCHITECTURE.md
/// leaves to it.
#[test]
fn every_source_file_opens_with_its_purpose() {
    let files = load_sources();
    assert!(files.len() > 100, "the check reads the sources");
    let bare: Vec<&str> = files
        .iter()
        .filter(|f| !f.text.trim_start().starts_with("//!"))
        .map(|f| f.rel.as_str())
        .collect();
    assert!(bare.is_empty(), "files without a `//!` header: {bare:?}");
}
