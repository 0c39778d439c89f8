//! `inner`/`outer` (spec 5.4): the inner declaration an outer component stands for, found
//! in the enclosing instances or added at the top level by default, and checked to match.

use super::*;

impl<'a> Flattener<'a> {
    /// The `inner` component an `outer` one of `node` stands for. Without one, a default
    /// inner is added at the top level with a warning (spec 5.4).
    pub fn inner_of(&self, node: &NodeRef, comp: &Rc<Comp>) -> Res<(NodeRef, Rc<Comp>)> {
        if let Some(found) = self.find_inner(node, &comp.name) {
            self.check_inner_matches(node, comp, &found.0, &found.1)?;
            return Ok(found);
        }
        let mut root = node.clone();
        while let Some(p) = root.parent.clone() {
            root = p;
        }
        if let Some((_, c)) = self
            .implicit_inners
            .borrow()
            .iter()
            .find(|(n, _)| *n == comp.name)
        {
            return Ok((root, c.clone()));
        }
        let ty = self.comp_type(node, comp)?;
        if let Some(c) = ty.class {
            if self.lib().get(c).def.prefixes.partial {
                return err(
                    comp.span,
                    format!(
                        "no `inner` declaration for `outer {}`, and its class `{}` is partial so no default can be used",
                        comp.name,
                        self.lk.name_of(c)
                    ),
                )
                .map_err(|d| Box::new(d.with_help(format!(
                    "add `inner {} {};` at the top level of the model",
                    comp.type_name, comp.name
                ))));
            }
        }
        self.warnings.borrow_mut().push(
            Diagnostic::warning(
                comp.span,
                format!(
                    "no `inner` declaration for `outer {}`; a default `inner {} {}` is added at the top level",
                    comp.name, comp.type_name, comp.name
                ),
            )
            .with_help(format!(
                "add `inner {} {};` at the top level of the model",
                comp.type_name, comp.name
            )),
        );
        let mut prefixes = comp.prefixes;
        prefixes.inner = true;
        prefixes.outer = false;
        let inner = Rc::new(Comp {
            name: comp.name.clone(),
            scope: comp.scope,
            type_name: comp.type_name.clone(),
            type_subs: comp.type_subs.clone(),
            decl: comp.decl.clone(),
            prefixes,
            tprefixes: comp.tprefixes,
            protected: false,
            mods: comp.mods.clone(),
            env: comp.env.clone(),
            condition_env: comp.condition_env.clone(),
            span: comp.span,
            ty: OnceCell::new(),
            dims: OnceCell::new(),
        });
        self.implicit_inners
            .borrow_mut()
            .push((comp.name.clone(), inner.clone()));
        Ok((root, inner))
    }

    /// The `inner` component must be a subtype of the `outer` one: the same predefined
    /// type or enumeration, the same dimensions, and every public element of a structured
    /// outer type (spec 5.4).
    fn check_inner_matches(
        &self,
        node: &NodeRef,
        outer: &Rc<Comp>,
        inner_node: &NodeRef,
        inner: &Rc<Comp>,
    ) -> Res<()> {
        let ot = self.comp_type(node, outer)?;
        let it = self.comp_type(inner_node, inner)?;
        let type_problem = match (&ot.base, &it.base) {
            (Base::Class(o), Base::Class(i)) => self
                .lk
                .missing_public_component(*i, *o)
                .map(|m| format!("its class has no element `{m}`")),
            (Base::Enum(_, ol), Base::Enum(_, il)) if ol == il => None,
            (o, i) if o == i => None,
            _ => Some(format!(
                "`{}` is not a subtype of `{}`",
                inner.type_name, outer.type_name
            )),
        };
        let problem = match type_problem {
            Some(p) => Some(p),
            None => {
                let od = self.comp_dims(node, outer)?;
                let id = self.comp_dims(inner_node, inner)?;
                (od != id).then(|| {
                    format!(
                        "its dimensions {} differ from the outer dimensions {}",
                        format_dims(&id),
                        format_dims(&od)
                    )
                })
            }
        };
        let Some(problem) = problem else {
            return Ok(());
        };
        Err(Box::new(
            Diagnostic::error(
                outer.decl.name.span,
                format!(
                    "the `inner {}` that `outer {}` refers to does not match it: {problem}",
                    inner.name, outer.name
                ),
            )
            .with_secondary(inner.decl.name.span, "inner declared here")
            .with_help("declare the inner and outer components with the same type and dimensions"),
        ))
    }

    /// Find the `inner` declaration matching an `outer` component of `node`.
    pub fn find_inner(&self, node: &NodeRef, name: &str) -> Option<(NodeRef, Rc<Comp>)> {
        self.find_inner_from(node.parent.as_ref()?, name)
    }

    /// Find an `inner` declaration `name` in `node` or the instances enclosing it.
    pub fn find_inner_from(&self, node: &NodeRef, name: &str) -> Option<(NodeRef, Rc<Comp>)> {
        let mut cur = Some(node.clone());
        while let Some(n) = cur {
            if let Some(c) = self.find_comp(&n, name) {
                if c.prefixes.inner {
                    return Some((n, c));
                }
            }
            cur = n.parent.clone();
        }
        None
    }
}

/// `[3, 2]` for dimensions (`scalar` for none).
fn format_dims(dims: &[usize]) -> String {
    if dims.is_empty() {
        return "scalar".to_string();
    }
    let parts: Vec<String> = dims.iter().map(|d| d.to_string()).collect();
    format!("[{}]", parts.join(", "))
}
