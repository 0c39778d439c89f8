//! The flattening context: the `Flattener` with its instances (nodes) and caches. One
//! module per concern: `elements` (collecting an instance's elements through `extends`,
//! modifiers and redeclarations, with their legality checks), `types` (a component's type
//! through short class definitions and redeclared classes), `dims` (component dimensions
//! from subscripts and bindings), `inner_outer` (the `inner` an `outer` stands for).

mod dims;
mod elements;
mod inner_outer;
mod types;

use crate::expand::{Cx, Val};
use crate::flat::Expr;
use crate::inst::*;
use crate::loader::{ClassId, Library};
use moss_syntax::ast::{self, ClassKind, ClassSpecifier, Element, EnumLiterals, Visibility};
use moss_syntax::{Diagnostic, Span};
use rustc_hash::FxHashMap;
use rustc_hash::FxHashMap as HashMap;
use std::cell::{Cell, OnceCell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;

/// Prefixes inherited by the elements of a structured component (`parameter Rec r` makes
/// every field of `r` a parameter).
#[derive(Clone, Copy, Default)]
pub struct Inherited {
    pub variability: Option<ast::Variability>,
    pub protected: bool,
    /// `flow`/`stream` on a structured component applies to all its variables.
    pub connector: Option<ast::ConnectorPrefix>,
    /// `annotation(Evaluate=...)` on an enclosing structured component: it applies to all
    /// its components, overriding their own settings (spec 18.3), so the outermost wins.
    pub evaluate: Option<bool>,
}

pub struct Flattener<'a> {
    pub lk: Lookup<'a>,
    /// Functions referenced so far: full name → class.
    pub functions: RefCell<BTreeMap<String, ClassId>>,
    /// Functions named only by `inverse` annotations: translated after the others, each
    /// dropped (with its annotation) when it cannot be translated, as the annotation is
    /// only an offer.
    pub inverse_functions: RefCell<BTreeMap<String, ClassId>>,
    pub package_nodes: RefCell<HashMap<ClassId, NodeRef>>,
    pub warnings: RefCell<Vec<Diagnostic>>,
    pub depth: Cell<u32>,
    /// Set while the call of a tuple equation `(a, b) = f(...)` is expanded: the call is
    /// kept even when its arguments are literals, because evaluating it now would give its
    /// first output only.
    pub keep_calls: Cell<bool>,
    /// Per-node extra data keyed by node address: inherited prefixes.
    pub inherited: RefCell<HashMap<usize, Inherited>>,
    /// Cache of evaluated component values (full instance name).
    pub values: RefCell<HashMap<String, Val>>,
    /// Parameters (not constants) whose values were evaluated into the structure
    /// ([`crate::flat::FlatModel::structural_parameters`]).
    pub structural: RefCell<std::collections::BTreeSet<String>>,
    /// Above 0 while parameters are evaluated only to try something (binding the arguments of
    /// a call to size its result): those evaluations do not make a parameter structural.
    pub structural_trials: Cell<u32>,
    /// Component arrays whose elements were flattened as renamed copies of the first
    /// ([`crate::shared_elements`]), by the address of their `Comp`: references into their
    /// elements resolve on the first element's instance (see `Flattener::lookup_element`).
    pub shared_arrays: RefCell<FxHashMap<usize, Rc<Comp>>>,
    /// Class named by a type name written at a place in the source, looked up from a scope
    /// (when no redeclaration in the instance overrides it): the same for every instance of
    /// the declaring class, so a component array looks its element type up once.
    pub class_names: RefCell<ClassNameCache>,
    /// Component declarations of the syntax tree, shared by all instances (`shared_decl`).
    pub shared_decls: RefCell<FxHashMap<usize, Rc<ast::ComponentDecl>>>,
    /// Default `inner` components added at the top level for `outer` ones without an inner.
    pub implicit_inners: RefCell<Vec<(Arc<str>, Rc<Comp>)>>,
    /// Errors found while collecting elements (reported after the walk).
    pub errors: RefCell<Vec<Diagnostic>>,
    /// Classes whose restrictions were checked.
    pub checked: RefCell<std::collections::HashSet<ClassId>>,
    /// Connector classes whose balance was checked.
    pub balance_checked: RefCell<std::collections::HashSet<ClassId>>,
    /// Record classes by their field names (for operator overloading on record values).
    pub record_shapes: RefCell<HashMap<Vec<Arc<str>>, ClassId>>,
    /// Result dimensions of the array-valued calls expanded so far, by printed call (for
    /// [`crate::lift`]).
    pub array_calls: RefCell<HashMap<String, Vec<usize>>>,
    /// Specializations of functions for their functional arguments, by flat name
    /// ([`crate::funargs`]).
    pub fn_specs: RefCell<BTreeMap<String, crate::funargs::FnSpec>>,
}

/// Scope and source place of a class name → the class it names (see `class_named`).
pub type ClassNameCache = FxHashMap<(Option<ClassId>, Span), Option<ClassId>>;

/// A path of record fields below an instance: names with their 1-based indices.
pub type FieldPath = Vec<(String, Vec<usize>)>;

fn key<T>(r: &Rc<T>) -> usize {
    Rc::as_ptr(r) as *const u8 as usize
}

impl<'a> Flattener<'a> {
    pub fn new(lib: &'a Library) -> Flattener<'a> {
        Flattener {
            lk: Lookup::new(lib),
            functions: RefCell::new(BTreeMap::new()),
            inverse_functions: RefCell::new(BTreeMap::new()),
            package_nodes: RefCell::new(HashMap::default()),
            warnings: RefCell::new(Vec::new()),
            depth: Cell::new(0),
            keep_calls: Cell::new(false),
            inherited: RefCell::new(HashMap::default()),
            values: RefCell::new(HashMap::default()),
            structural: RefCell::default(),
            structural_trials: Cell::new(0),
            shared_arrays: RefCell::default(),
            class_names: RefCell::new(FxHashMap::default()),
            shared_decls: RefCell::new(FxHashMap::default()),
            implicit_inners: RefCell::new(Vec::new()),
            errors: RefCell::new(Vec::new()),
            checked: RefCell::new(std::collections::HashSet::default()),
            balance_checked: RefCell::new(std::collections::HashSet::default()),
            record_shapes: RefCell::new(HashMap::default()),
            array_calls: RefCell::new(HashMap::default()),
            fn_specs: RefCell::new(BTreeMap::new()),
        }
    }

    pub fn lib(&self) -> &Library {
        self.lk.lib
    }

    pub fn new_node(
        &self,
        class: ClassId,
        path: String,
        mods: Mod,
        parent: Option<NodeRef>,
        inh: Inherited,
    ) -> NodeRef {
        let n = Rc::new(Node {
            class,
            path,
            mods,
            parent,
            elems: OnceCell::new(),
            children: RefCell::new(HashMap::default()),
        });
        self.inherited.borrow_mut().insert(key(&n), inh);
        n
    }

    pub fn inherited_of(&self, n: &NodeRef) -> Inherited {
        self.inherited
            .borrow()
            .get(&key(n))
            .copied()
            .unwrap_or_default()
    }

    /// A node standing for a package (or any class used as a scope for its constants).
    pub fn package_node(&self, class: ClassId) -> NodeRef {
        if let Some(n) = self.package_nodes.borrow().get(&class) {
            return n.clone();
        }
        let path = self.lk.name_of(class);
        let n = self.new_node(class, path, Mod::default(), None, Inherited::default());
        self.package_nodes.borrow_mut().insert(class, n.clone());
        n
    }

    /// Is `node` the instance of a package that [`Self::package_node`] made (its components
    /// are package constants, not variables of the model)?
    pub fn is_package_node(&self, node: &NodeRef) -> bool {
        self.package_nodes
            .borrow()
            .get(&node.class)
            .is_some_and(|n| Rc::ptr_eq(n, node))
    }

    /// Find component `name` of an instance.
    pub fn find_comp(&self, node: &NodeRef, name: &str) -> Option<Rc<Comp>> {
        let e = self.elems(node);
        e.index.get(name).map(|i| e.comps[*i].clone())
    }

    /// `input`/`output` of a component, from its declaration or its type
    /// (`type InArgument = input Real`).
    pub fn comp_causality(&self, node: &NodeRef, comp: &Rc<Comp>) -> Option<ast::Causality> {
        comp.tprefixes
            .causality
            .or_else(|| self.comp_type(node, comp).ok().and_then(|t| t.causality))
    }

    /// Is the component present (its `if` condition true)?
    pub fn comp_enabled(&self, node: &NodeRef, comp: &Rc<Comp>) -> Res<bool> {
        let Some(cond) = &comp.decl.condition else {
            return Ok(true);
        };
        let env = comp.condition_env.as_ref().unwrap_or(&comp.env);
        let v = self.eval_expr(cond, env, &mut Cx::eval())?;
        let _ = node;
        match v {
            Val::S(Expr::Boolean(b)) => Ok(b),
            _ => err(
                cond.span,
                "the condition of a conditional component must be a Boolean parameter expression",
            ),
        }
    }

    /// Child instance for element `indices` of component `comp` (a structured component).
    pub fn child_node(&self, node: &NodeRef, comp: &Rc<Comp>, indices: &[usize]) -> Res<NodeRef> {
        let mut path = crate::expand::qualified(node, &comp.name);
        if !indices.is_empty() {
            push_indices(&mut path, indices);
        }
        if let Some(n) = node.children.borrow().get(&path) {
            return Ok(n.clone());
        }
        let ty = self.comp_type(node, comp)?;
        let Base::Class(class) = ty.base else {
            return err(
                comp.span,
                format!("`{}` is not a structured component", comp.name),
            );
        };
        let mut mods = comp.mods.clone();
        for i in indices {
            mods = mods.index(*i - 1);
        }
        self.check_final(&mods, &ty.mods, &comp.name);
        self.check_protected_modifications(comp, class);
        let mods = Mod::merge(&mods, &ty.mods);
        let parent_inh = self.inherited_of(node);
        let inh = Inherited {
            variability: most_restrictive(comp.tprefixes.variability, parent_inh.variability),
            protected: comp.protected || parent_inh.protected,
            connector: comp.tprefixes.connector.or(parent_inh.connector),
            evaluate: parent_inh
                .evaluate
                .or_else(|| crate::flatten::annotated_evaluate(&comp.decl.description)),
        };
        let child = self.new_node(class, path.clone(), mods, Some(node.clone()), inh);
        node.children.borrow_mut().insert(path, child.clone());
        Ok(child)
    }
}

/// A quoted identifier that holds a flat name (`'a.b[2]'`, as printed by `moss flatten`)
/// stands for that name: reading a flat model back gives the same variable names.
pub fn flat_ident(name: &str) -> &str {
    match name.strip_prefix('\'').and_then(|n| n.strip_suffix('\'')) {
        Some(inner) if inner.contains(['.', '[']) && !inner.contains(['\\', '\'']) => inner,
        _ => name,
    }
}

/// The lower of two variabilities (`constant R r` makes the parameters of `r` constants).
pub fn most_restrictive(
    a: Option<ast::Variability>,
    b: Option<ast::Variability>,
) -> Option<ast::Variability> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, y) => x.or(y),
    }
}

/// Largest array (number of scalar elements) the frontend expands.
pub const MAX_ELEMENTS: usize = 2_000_000;

/// Deepest chain of `extends` clauses and short class definitions followed when collecting
/// a class's elements (the MSL needs about 15). The collection recurses once per level;
/// deeper chains are reported instead of being cut off without a word.
pub const MAX_INHERITANCE_DEPTH: u32 = 40;

/// `[1,2]` for indices `[1, 2]` (1-based).
pub fn format_indices(indices: &[usize]) -> String {
    let mut s = String::new();
    push_indices(&mut s, indices);
    s
}

/// Append `[i,j,...]` to `s` (pushes instead of `format!`: instance names are built once
/// per component of every instance, 10^5 times and more for large models).
pub fn push_indices(s: &mut String, indices: &[usize]) {
    use std::fmt::Write;
    s.push('[');
    for (k, i) in indices.iter().enumerate() {
        if k > 0 {
            s.push(',');
        }
        let _ = write!(s, "{i}");
    }
    s.push(']');
}

/// All index tuples (1-based) of an array with dimensions `dims`, row-major.
pub fn index_tuples(dims: &[usize]) -> Vec<Vec<usize>> {
    let mut out = vec![Vec::new()];
    for &d in dims {
        let mut next = Vec::with_capacity(out.len() * d);
        for prefix in &out {
            for i in 1..=d {
                let mut p = prefix.clone();
                p.push(i);
                next.push(p);
            }
        }
        out = next;
    }
    out
}

pub fn arc(s: &str) -> Arc<str> {
    Arc::from(s)
}
